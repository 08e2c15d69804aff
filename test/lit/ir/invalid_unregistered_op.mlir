// CAKE-P010: MLIR input naming an op no dialect defines.
// RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
builtin.module {
  "cake.kernel"() <{sym_name = "k", param_names = []}> ({
    "cake.bogus"() : () -> ()
  }) : () -> ()
}
// CHECK: invalid_unregistered_op.mlir:5:17: error: invalid IR: Operation cake.bogus is not registered [CAKE-P010]
// CHECK-NEXT: {{^}}    "cake.bogus"() : () -> ()
// CHECK-NEXT: {{^}}                ^
// CHECK-NOT: error
