// RUN: linnet-opt %s --linnet-cpu-instrument-commands | FileCheck %s
// RUN: linnet-opt %s --linnet-cpu-instrument-commands --linnet-cpu-instrument-commands | FileCheck %s --check-prefix=TWICE

// Each op the plan tagged with its task is bracketed by the timers, with
// the id its task has in the module's table; the tag is consumed.
// CHECK: module attributes {linnet.profile.tasks = ["task.f.l0", "task.f.l1", "task.g.whole"]}
// CHECK-DAG: func.func private @linnet_prof_begin(i64)
// CHECK-DAG: func.func private @linnet_prof_end(i64)
// CHECK-LABEL: func.func @f(
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @linnet_prof_begin(%[[C0]]) : (i64) -> ()
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4xf32>){{$}}
// CHECK-NEXT: %[[E0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @linnet_prof_end(%[[E0]])
// CHECK: scf.for
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: func.call @linnet_prof_begin(%[[C1]])
// CHECK-NEXT: linalg.generic
// CHECK: func.call @linnet_prof_end
// A function that is one task is timed from its entry to each return.
// CHECK-LABEL: func.func @g(
// CHECK-NEXT: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: call @linnet_prof_begin(%[[C2]])
// CHECK: call @linnet_prof_end
// CHECK-NEXT: return
// An untagged module (the second run) is left alone.
// TWICE-COUNT-3: call @linnet_prof_begin
// TWICE-NOT: call @linnet_prof_begin

#id = affine_map<(i) -> (i)>
func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill {linnet.task = "task.f.l0"} ins(%z : f32) outs(%b : memref<4xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
        ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) attrs = {linnet.task = "task.f.l1"} {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}

func.func @g(%a: memref<4xf32>) attributes {linnet.task = "task.g.whole"} {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %a[%c0] : memref<4xf32>
  return
}
