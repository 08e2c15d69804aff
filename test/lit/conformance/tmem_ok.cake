# Near miss: the canonical TMEM kernel verifies on the datacenter Blackwell parts.
# RUN: cakec verify %examples/seed_fragment.cake --target sm_100a
# RUN: cakec verify %examples/seed_fragment.cake --target sm_103a
# RUN: cakec verify %examples/seed_fragment.cake
