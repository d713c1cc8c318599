// RUN: linnet-opt -allow-unregistered-dialect -linnet-cpu-fold-loop-checks %s | FileCheck %s

// A reduction binder's index check (d < 64 for d in 0 .. 64), a check of a
// head index divided by the group size (h / 2 < 4 for h in 0 .. 8), and a
// key position below a clamped run-time length (j < 2048 for j below
// max(min(start + 1, 2048), 0)): all decided by the loops' bounds.
// CHECK-LABEL: func.func @decided
// CHECK-NOT: arith.cmpi
// CHECK: "test.use"(%true{{[_0-9]*}}, %false{{[_0-9]*}}, %false{{[_0-9]*}}, %true{{[_0-9]*}})
func.func @decided(%start: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c2048 = arith.constant 2048 : index
  %n0 = arith.addi %start, %c1 : index
  %n1 = arith.minsi %n0, %c2048 : index
  %n = arith.maxsi %n1, %c0 : index
  scf.for %h = %c0 to %c8 step %c1 {
    %g = arith.floordivsi %h, %c2 : index
    scf.for %j = %c0 to %n step %c1 {
      scf.for %d = %c0 to %c64 step %c1 {
        %a = arith.cmpi ult, %d, %c64 : index
        %b = arith.cmpi uge, %d, %c64 : index
        %c = arith.cmpi uge, %g, %c4 : index
        %e = arith.cmpi slt, %j, %c2048 : index
        "test.use"(%a, %b, %c, %e) : (i1, i1, i1, i1) -> ()
      }
    }
  }
  return
}

// What the bounds do not decide stays: d < 32 for d in 0 .. 64, a step
// that lands on 62 (0, 31, 62: below 63 but not below 62), a value of
// unknown range, and an unsigned comparison of a value that may be
// negative.
// CHECK-LABEL: func.func @undecided
// CHECK-COUNT-4: arith.cmpi
func.func @undecided(%x: index) {
  %c0 = arith.constant 0 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %c62 = arith.constant 62 : index
  %c64 = arith.constant 64 : index
  %cm1 = arith.constant -1 : index
  scf.for %d = %c0 to %c64 step %c31 {
    %a = arith.cmpi ult, %d, %c32 : index
    %b = arith.cmpi slt, %d, %c62 : index
    %c = arith.cmpi ult, %x, %c64 : index
    %s = arith.addi %d, %cm1 : index
    %e = arith.cmpi ult, %s, %c64 : index
    "test.use"(%a, %b, %c, %e) : (i1, i1, i1, i1) -> ()
  }
  return
}

// The same steps decide: 0, 31, 62 are all below 63.
// CHECK-LABEL: func.func @stepped
// CHECK: "test.use"(%true)
func.func @stepped() {
  %c0 = arith.constant 0 : index
  %c31 = arith.constant 31 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  scf.for %d = %c0 to %c64 step %c31 {
    %a = arith.cmpi slt, %d, %c63 : index
    "test.use"(%a) : (i1) -> ()
  }
  return
}
