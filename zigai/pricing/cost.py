"""Exact money values for pricing: :class:`UsageCost` and the per-model rates :class:`ModelPrice`.

Money is never a float here.  A cost is an integer number of nano-USD
(1 USD = 10**9 nano-USD) and a rate is an integer number of nano-USD per
million tokens, so $2.50 per million tokens is ``2_500_000_000``.  Amounts
written in dollars (``"2.50"``, ``Decimal("0.075")``, ``3``) are converted
exactly by :meth:`UsageCost.from_usd` and :meth:`ModelPrice.from_usd`; a value
finer than one nano-USD, a float, a bool, a negative or a non-finite amount is
rejected with :class:`InvalidPrice`.

How :meth:`ModelPrice.estimate` splits usage into priced buckets (the counters
of :mod:`zigai.usage` are inclusive subsets of the input/output totals):

============================  =========================================  ======================
bucket                        tokens                                     rate
============================  =========================================  ======================
uncached text input           input - cache_read - cache_write - audio   ``input_per_mtok``
cache reads                   cache_read_tokens                          ``cache_read_per_mtok``
cache writes                  cache_write_tokens                         ``cache_write_per_mtok``
input audio                   input_audio_tokens                         ``input_audio_per_mtok``
text output                   output - output_audio (- reasoning)        ``output_per_mtok``
reasoning                     reasoning_tokens                           ``reasoning_per_mtok``,
                                                                         else ``output_per_mtok``
output audio                  output_audio_tokens                        ``output_audio_per_mtok``
============================  =========================================  ======================

Rules, in order:

* a bucket with tokens but no rate makes the whole estimate ``None`` (unknown),
  never a silent zero; an empty bucket without a rate is fine;
* usage does not say how much cached input was audio, so cached input together
  with audio input (both non-zero) is ``None``: the split is unknown;
* reasoning tokens are output tokens and are billed at the output rate unless
  the price carries a separate ``reasoning_per_mtok``;
* arithmetic is exact integers: ``total = sum(tokens * rate)`` in
  nano-USD-per-million units, then divided by 1,000,000 **once**, rounding half
  up.  Estimating a summed :class:`~zigai.usage.RunUsage` therefore rounds once,
  while adding per-request estimates rounds per request (they can differ by less
  than one nano-USD per request).

``ModelPrice.unpriced_charges`` names charges of the source price list that no
estimate includes (for example per-search fees of provider-native tools); an
estimate is the token charge only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

from zigai.errors import MessageError
from zigai.usage import InvalidUsage, RequestUsage, RunUsage

__all__ = [
    "InvalidPrice", "ModelPrice", "UsageCost", "NANO_PER_USD", "TOKENS_PER_MTOK", "REPORTED_COST_KEY",
    "reported_cost",
]

NANO_PER_USD = 1_000_000_000
TOKENS_PER_MTOK = 1_000_000

UsdAmount = str | Decimal | int


class InvalidPrice(MessageError):
    """A cost or rate was not an exact, finite, non-negative whole number of nano-USD."""


def _check_nano(what: str, value: object) -> int:
    if type(value) is not int:
        raise InvalidPrice(f"{what} must be an int of nano-USD, got {type(value).__name__}")
    if value < 0:
        raise InvalidPrice(f"{what} must be >= 0, got {value}")
    return value


def nano_from_usd(value: UsdAmount, what: str = "amount") -> int:
    """Convert a dollar amount (``str``, ``Decimal`` or ``int``) to an exact nano-USD int."""
    if isinstance(value, bool) or not isinstance(value, str | Decimal | int):
        raise InvalidPrice(f"{what} must be a str, Decimal or int of USD, got {type(value).__name__}")
    if isinstance(value, str):
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:
            raise InvalidPrice(f"{what} is not a decimal number: {value!r}") from None
    else:
        amount = Decimal(value)
    if not amount.is_finite():
        raise InvalidPrice(f"{what} must be finite, got {value!r}")
    if amount < 0:
        raise InvalidPrice(f"{what} must be >= 0, got {value!r}")
    sign, digits, exponent = amount.as_tuple()
    assert isinstance(exponent, int)  # finite
    scaled = int("".join(map(str, digits)) or "0")
    shift = exponent + 9
    if shift >= 0:
        return scaled * 10**shift
    quotient, remainder = divmod(scaled, 10**-shift)
    if remainder:
        raise InvalidPrice(f"{what} {value!r} is finer than one nano-USD")
    return quotient


#: The ``ResponseMessage.provider_details`` key under which an adapter records the cost the
#: provider itself reported for the request: USD as an exact decimal string.
REPORTED_COST_KEY = "reported_cost_usd"


def reported_cost(response: Any) -> UsageCost | None:
    """The provider-reported cost of one response, rounded half-even to whole nano-USD.

    Reads ``response.provider_details[REPORTED_COST_KEY]`` (set by adapters whose provider
    reports a cost, e.g. OpenRouter's ``usage.cost``); None when the provider reported none.
    """
    details = getattr(response, "provider_details", None)
    value = details.get(REPORTED_COST_KEY) if isinstance(details, Mapping) else None
    if value is None:
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount < 0:
        return None
    return UsageCost(int((amount * NANO_PER_USD).to_integral_value(ROUND_HALF_EVEN)))


def _usd_decimal(nano: int) -> Decimal:
    digits = tuple(int(d) for d in str(nano))
    return Decimal((0, digits, -9))


@dataclass(frozen=True, slots=True, order=True)
class UsageCost:
    """An exact, non-negative cost in nano-USD (``nano_usd / 10**9`` dollars)."""

    nano_usd: int

    def __post_init__(self) -> None:
        _check_nano("UsageCost.nano_usd", self.nano_usd)

    @classmethod
    def from_usd(cls, amount: UsdAmount) -> UsageCost:
        """Exact cost from dollars, e.g. ``UsageCost.from_usd("0.000123456")``."""
        return cls(nano_from_usd(amount, "UsageCost amount"))

    @property
    def usd(self) -> Decimal:
        """The cost in dollars as an exact ``Decimal`` with nine decimal places."""
        return _usd_decimal(self.nano_usd)

    def __add__(self, other: UsageCost) -> UsageCost:
        if not isinstance(other, UsageCost):
            return NotImplemented
        return UsageCost(self.nano_usd + other.nano_usd)

    def __radd__(self, other: object) -> UsageCost:
        # Lets ``sum(costs)`` start from the int 0.
        if type(other) is int and other == 0:
            return self
        return NotImplemented

    def __str__(self) -> str:
        whole, fraction = divmod(self.nano_usd, NANO_PER_USD)
        return f"${whole}.{fraction:09d}"


_RATE_FIELDS = (
    "input_per_mtok",
    "output_per_mtok",
    "cache_read_per_mtok",
    "cache_write_per_mtok",
    "input_audio_per_mtok",
    "output_audio_per_mtok",
    "reasoning_per_mtok",
)


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """Flat per-token rates of one model, each in nano-USD per million tokens.

    ``None`` means the rate is unknown: usage in that bucket cannot be priced.
    ``unpriced_charges`` is a sorted tuple of names of charges that estimates
    do not include (informational; see the module docstring).
    """

    input_per_mtok: int
    output_per_mtok: int
    cache_read_per_mtok: int | None = None
    cache_write_per_mtok: int | None = None
    input_audio_per_mtok: int | None = None
    output_audio_per_mtok: int | None = None
    reasoning_per_mtok: int | None = None
    unpriced_charges: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in _RATE_FIELDS:
            value = getattr(self, name)
            if value is not None or name in ("input_per_mtok", "output_per_mtok"):
                _check_nano(f"ModelPrice.{name}", value)
        charges = self.unpriced_charges
        if isinstance(charges, str) or not all(isinstance(c, str) and c for c in charges):
            raise InvalidPrice("ModelPrice.unpriced_charges must be non-empty strings")
        object.__setattr__(self, "unpriced_charges", tuple(sorted(set(charges))))

    @classmethod
    def from_usd(
        cls,
        input: UsdAmount,
        output: UsdAmount,
        *,
        cache_read: UsdAmount | None = None,
        cache_write: UsdAmount | None = None,
        input_audio: UsdAmount | None = None,
        output_audio: UsdAmount | None = None,
        reasoning: UsdAmount | None = None,
        unpriced_charges: tuple[str, ...] = (),
    ) -> ModelPrice:
        """Rates written in dollars per million tokens, converted exactly."""

        def conv(value: UsdAmount | None, what: str) -> int | None:
            return None if value is None else nano_from_usd(value, what)

        return cls(
            input_per_mtok=nano_from_usd(input, "input rate"),
            output_per_mtok=nano_from_usd(output, "output rate"),
            cache_read_per_mtok=conv(cache_read, "cache_read rate"),
            cache_write_per_mtok=conv(cache_write, "cache_write rate"),
            input_audio_per_mtok=conv(input_audio, "input_audio rate"),
            output_audio_per_mtok=conv(output_audio, "output_audio rate"),
            reasoning_per_mtok=conv(reasoning, "reasoning rate"),
            unpriced_charges=unpriced_charges,
        )

    def estimate(self, usage: RequestUsage | RunUsage) -> UsageCost | None:
        """Exact token cost of ``usage``, or ``None`` when any used bucket has no rate."""
        if not isinstance(usage, RequestUsage | RunUsage):
            raise InvalidUsage(
                f"estimate expects a RequestUsage or RunUsage, got {type(usage).__name__}"
            )
        cached = usage.cache_read_tokens + usage.cache_write_tokens
        if cached and usage.input_audio_tokens:
            return None  # how much cached input was audio is not reported
        text_in = usage.input_tokens - cached - usage.input_audio_tokens
        text_out = usage.output_tokens - usage.output_audio_tokens
        reasoning_rate = self.reasoning_per_mtok
        reasoning = 0
        if reasoning_rate is not None:
            reasoning = usage.reasoning_tokens
            text_out -= reasoning
            if text_out < 0:
                return None  # reasoning and output audio overlap: split unknown
        buckets: tuple[tuple[int, int | None], ...] = (
            (text_in, self.input_per_mtok),
            (usage.cache_read_tokens, self.cache_read_per_mtok),
            (usage.cache_write_tokens, self.cache_write_per_mtok),
            (usage.input_audio_tokens, self.input_audio_per_mtok),
            (text_out, self.output_per_mtok),
            (reasoning, reasoning_rate),
            (usage.output_audio_tokens, self.output_audio_per_mtok),
        )
        total = 0
        for tokens, rate in buckets:
            if tokens:
                if rate is None:
                    return None
                total += tokens * rate
        return UsageCost((total + TOKENS_PER_MTOK // 2) // TOKENS_PER_MTOK)

    def as_dict(self) -> dict[str, Any]:
        """Plain field values (rates in nano-USD per million tokens)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}
