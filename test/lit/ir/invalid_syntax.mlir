// CAKE-P010: MLIR input that is not MLIR text.
// RUN: not cakec opt %s 2>&1 | filecheck --strict-whitespace %s
builtin.module {
  %0 = arith.constant 1 :
}
// CHECK: invalid_syntax.mlir:5:1: error: invalid IR: type expected [CAKE-P010]
// CHECK-NEXT: {{^}}}
// CHECK-NEXT: {{^}}^
// CHECK-NOT: error
