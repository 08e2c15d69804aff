// CAKE-P010: MLIR input that parses but does not verify: the message names the op.
// RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
builtin.module {
  "cake.kernel"() <{sym_name = "k", param_names = []}> ({
    %role = "cake.role"() <{sym_name = "role", warps = array<i64: 0>}> : () -> !cake.role
    %c0 = arith.constant 0 : i32
    "cake.on_role"(%role) ({
      "cake.wait"(%c0, %c0) : (i32, i32) -> ()
    }) : (!cake.role) -> ()
  }) : () -> ()
}
// CHECK: invalid_verify.mlir:8:7: error: invalid IR: `cake.wait`: operand 'barrier' at position 0 does not verify: i32 should be of base attribute cake.barrier [CAKE-P010]
// CHECK-NEXT: {{^}}      "cake.wait"(%c0, %c0) : (i32, i32) -> ()
// CHECK-NEXT: {{^}}      ^
// CHECK-NOT: error
