// RUN: linnet-opt %s -linnet-cpu-exact-exp | FileCheck %s

// Every f32 exponential, scalar or a vector, becomes the C library's expf
// algorithm as arithmetic: double lanes, FMAs, a lookup in the 32-entry
// table and selects for the special arguments. f64 stays math.exp.

// CHECK:       memref.global "private" constant @linnet_expf_table : memref<32xi64> = dense<[4607182418800017408, 4607140297302181236,
// CHECK-SAME:  {alignment = 64 : i64}

// CHECK-LABEL: func.func @vector(
// CHECK-NOT:   math.exp
// CHECK:       %[[XD:.*]] = arith.extf %{{.*}} : vector<16xf32> to vector<16xf64>
// CHECK:       %[[KD:.*]] = math.fma %{{.*}}, %[[XD]], %{{.*}} : vector<16xf64>
// CHECK:       %[[KI:.*]] = arith.bitcast %[[KD]] : vector<16xf64> to vector<16xi64>
// CHECK:       %[[T:.*]] = memref.get_global @linnet_expf_table : memref<32xi64>
// CHECK:       vector.gather %[[T]][%{{.*}}] [%{{.*}}], %{{.*}}, %{{.*}} : memref<32xi64>, vector<16xi32>, vector<16xi1>, vector<16xi64> into vector<16xi64>
// CHECK:       arith.shli %[[KI]], %{{.*}} : vector<16xi64>
// CHECK-COUNT-3: math.fma
// CHECK:       %[[Y:.*]] = arith.truncf %{{.*}} : vector<16xf64> to vector<16xf32>
// CHECK:       arith.cmpf olt
// CHECK:       arith.cmpf olt
// CHECK:       arith.cmpf ogt
// CHECK:       arith.cmpi ugt
// CHECK:       arith.addf
// CHECK:       arith.cmpi eq
// CHECK:       %[[R:.*]] = arith.select
// CHECK:       vector.store %[[R]]
func.func @vector(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %x = vector.load %a[%c0] : memref<64xf32>, vector<16xf32>
  %e = math.exp %x : vector<16xf32>
  vector.store %e, %a[%c0] : memref<64xf32>, vector<16xf32>
  return
}

// CHECK-LABEL: func.func @scalar(
// CHECK-NOT:   math.exp %{{.*}} : f32
// CHECK:       memref.load %{{.*}} : memref<32xi64>
// CHECK:       math.exp %{{.*}} : f64
func.func @scalar(%x: f32, %y: f64) -> (f32, f64) {
  %a = math.exp %x : f32
  %b = math.exp %y : f64
  return %a, %b : f32, f64
}
