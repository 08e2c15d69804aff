"""The attributes the frontend and the derive passes put on the IR, one instance per value.

Attributes are immutable values, and xDSL checks an attribute's parameters against its
definition every time one is made: 5-20 µs each (a `TensorType` 21, a `DenseArrayBase` 19,
a `TileType` 13, a parameterless type 5; 2026-12-06), some 0.4 ms of the GEMM example's IR
build for its ~30 types and arrays, and a tenth of the derive passes. So one instance per
value serves every op, and every build of a process: the server and the search loops build
the same small numbers, names, positions and types again and again. Each cache is bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TypeVar

from xdsl.dialects.builtin import (
    ArrayAttr, DenseArrayBase, FileLineColLoc, IntAttr, IntegerAttr, IntegerType, StringAttr,
    i64,
)
from xdsl.ir import Attribute

from cakec.dialects import cake

A = TypeVar("A", bound=Attribute)


@lru_cache(maxsize=4096)
def int_attr(n: int) -> IntAttr:
    return IntAttr(n)


@lru_cache(maxsize=4096)
def integer_attr(n: int, type_: IntegerType = i64) -> IntegerAttr:
    return IntegerAttr(n, type_)


@lru_cache(maxsize=4096)
def string_attr(text: str) -> StringAttr:
    return StringAttr(text)


def string_array(values: Sequence[str]) -> ArrayAttr[StringAttr]:
    return _string_array(tuple(values))


@lru_cache(maxsize=1024)
def _string_array(values: tuple[str, ...]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([string_attr(v) for v in values])


# The ops at one position share one location (building and verifying them was a fifth of
# the IR build).
@lru_cache(maxsize=16384)
def location_attr(path: str, line: int, col: int) -> FileLineColLoc:
    return FileLineColLoc(string_attr(path), int_attr(line), int_attr(col))


@lru_cache(maxsize=64)
def unit_type(cls: type[A]) -> A:
    """The one value of a type without parameters (`cake.RoleType`, `NoneType`)."""
    return cls()


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return _i64_array(tuple(values))


@lru_cache(maxsize=1024)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


@lru_cache(maxsize=1024)
def tensor_type(rank: int, element_type: Attribute, tma: bool) -> cake.TensorType:
    return cake.TensorType(rank, element_type, tma)


def view_type(shape: Sequence[int], element_type: Attribute, stages: int,
              swizzle: str) -> cake.ViewType:
    return _view_type(tuple(shape), element_type, stages, swizzle)


@lru_cache(maxsize=1024)
def _view_type(shape: tuple[int, ...], element_type: Attribute, stages: int,
               swizzle: str) -> cake.ViewType:
    return cake.ViewType(shape, element_type, stages, swizzle)


def stage_type(shape: Sequence[int], element_type: Attribute, swizzle: str) -> cake.StageType:
    return _stage_type(tuple(shape), element_type, swizzle)


@lru_cache(maxsize=1024)
def _stage_type(shape: tuple[int, ...], element_type: Attribute,
                swizzle: str) -> cake.StageType:
    return cake.StageType(shape, element_type, swizzle)


def tile_type(shape: Sequence[int], element_type: Attribute) -> cake.TileType:
    return _tile_type(tuple(shape), element_type)


@lru_cache(maxsize=1024)
def _tile_type(shape: tuple[int, ...], element_type: Attribute) -> cake.TileType:
    return cake.TileType(shape, element_type)
