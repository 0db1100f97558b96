"""The request fields every service reads alike (chieu.kit.fields)."""

from __future__ import annotations

import grpc
import pytest

from chieu.kit import fields
from chieu.kit.errors import ServiceError


@pytest.mark.parametrize("value", ["", "x" * 201, "a\nb", "a\tb", "a\x00", "a\x1b[2J", "a\u2028b", "a\x7f"])
def test_an_id_is_short_printable_text(value: str) -> None:
    with pytest.raises(ServiceError) as e:
        fields.ident(value, "request_id")
    assert (e.value.status, e.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_request_id")


def test_good_values_pass_as_given() -> None:
    assert fields.ident("Bèo dạt mây trôi 7", "song") == "Bèo dạt mây trôi 7"
    assert fields.ident("x" * 200, "request_id") == "x" * 200
    assert fields.reason("  support ticket 7 ") == "support ticket 7"  # trimmed
    assert fields.reason("x" * 500) == "x" * 500
    assert fields.text("", "target") == "" and fields.text("phòng 1", "target") == "phòng 1"
    assert fields.page_size(0) == 50 and fields.page_size(500) == 500


@pytest.mark.parametrize(("value", "reason"), [("", "reason_required"), ("  \n ", "reason_required"),
                                               ("x" * 501, "bad_reason"), ("a\x1bb", "bad_reason"),
                                               ("line\nbreak", "bad_reason")])
def test_a_reason_is_required_bounded_and_printable(value: str, reason: str) -> None:
    with pytest.raises(ServiceError) as e:
        fields.reason(value, "an adjustment")
    assert e.value.reason == reason
    assert len(e.value.message) < 100


@pytest.mark.parametrize("size", [-1, 501])
def test_a_page_size_is_bounded(size: int) -> None:
    with pytest.raises(ServiceError) as e:
        fields.page_size(size)
    assert e.value.reason == "bad_page_size"
