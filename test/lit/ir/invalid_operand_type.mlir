// CAKE-P010: MLIR input whose value is used with another type than it was defined with.
// RUN: not cakec opt %s 2>&1 | filecheck --strict-whitespace %s
builtin.module {
  %0 = arith.constant 1 : i32
  %1 = arith.addi %0, %0 : i64
}
// CHECK: invalid_operand_type.mlir:5:19: error: invalid IR: operand is used with type i64, but has been previously used or defined with type i32 [CAKE-P010]
// CHECK-NEXT: {{^}}  %1 = arith.addi %0, %0 : i64
// CHECK-NEXT: {{^}}                  ^
// CHECK-NOT: error
