"""The .cake language front end: text → syntax tree → `cake` IR, with positioned diagnostics.

    grammar.lark    the Lark LALR grammar (indentation-aware)
    parser.py       parsing into the syntax tree, CAKE-P… diagnostics
    ast.py          the typed syntax tree (frozen dataclasses with spans)
    builtins.py     signatures of the vocabulary (`lm.*`, resource methods, dtypes)
    values.py       what an expression denotes while the IR is built
    ir_builder.py   syntax tree → `cake` dialect IR: names, types, CAKE-T… diagnostics
    tile_exprs.py   register-tile expressions (vectors, broadcasting arithmetic, reductions)
"""
