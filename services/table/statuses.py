"""A decider's refusal as a gRPC status: the one place a :class:`~chieu.table.refusals.Refused`
value becomes an error (the deciders return refusals and know no gRPC)."""

from __future__ import annotations

from typing import NoReturn

import grpc

from chieu.kit.errors import ServiceError
from chieu.table import decide
from chieu.table.refusals import Refused


def error(refused: Refused) -> ServiceError:
    """The gRPC status of a decider's refusal: its kind's code, its reason and its message."""
    return ServiceError(grpc.StatusCode[refused.kind.value], refused.reason, refused.message)


def refuse(refused: Refused) -> NoReturn:
    raise error(refused)


def check_table_id(table_id: str) -> str:
    """``table_id`` if well formed; else INVALID_ARGUMENT / ``bad_table_id``."""
    if refused := decide.table_id_refused(table_id):
        refuse(refused)
    return table_id


def check_command_id(command_id: str) -> str:
    """``command_id`` if empty or well formed; else INVALID_ARGUMENT / ``bad_command_id``."""
    if refused := decide.command_id_refused(command_id):
        refuse(refused)
    return command_id
