"""The vectorized Nexmark event generator behind `'connector' = 'nexmark'`.

It follows the rules of the reference generator (nexmark-flink, a port of Apache Beam's;
see benchmarks/nexmark/GENERATOR.md) but produces a whole chunk of events per call with
numpy, never a Python loop per event:

* Randomness is counter-based: every random draw of event `k` is splitmix64 of
  (seed, field, k). An event's values therefore depend only on the seed and its number,
  never on how the events are cut into batches or where a reader resumed.
* Event types, ids, times, "hot" and "next" choices, prices, expiry times and the
  lengths of every string are computed from those draws with array arithmetic.
* Random strings (names, e-mails, item names, descriptions, URLs) come from pools built
  once per seed and are picked by random index (`take` over the few persons/auctions).
* The two wide string columns are built without copying: `extra` padding of every event
  is a window of a periodic random character pool (one cumulative-length offsets array
  per chunk, the data buffer is a slice of the pool), and the bids' channel/url pairs are
  a contiguous run, starting at a random place per chunk, of a pool of independently drawn
  (channel, url) pairs. Within a chunk the channel sequence is therefore a run of the pool
  (each pair is drawn with the right probabilities; runs of different chunks overlap
  at random places), which is the price of the zero-copy layout.

Chunks are aligned on absolute event numbers (`chunk_size` events each), so chunk `c`
always holds events `c * chunk_size ...`, whatever the readers ask for.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pyarrow as pa

from runtime.frozen import frozen_dataclass

FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
NUM_CATEGORIES = 5
NUM_ACTIVE_PEOPLE = 1000
NUM_IN_FLIGHT_AUCTIONS = 100
PERSON_ID_LEAD = 10
AUCTION_ID_LEAD = 10
HOT_AUCTION_RATIO = 100  # hot auction = first of the last 100 auctions
HOT_PERSON_RATIO = 100  # hot seller/bidder = first/second of the last 100 people
CHANNELS_NUMBER = 10_000
HOT_CHANNELS = ("Google", "Facebook", "Baidu", "Apple")
US_STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
US_CITIES = (
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
)
FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter")
LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris")

CHUNK_SIZE = 1 << 15  # events generated per call
STRING_POOL = 1 << 12  # entries of each random-string pool
CHANNEL_POOL = 1 << 17  # (channel, url) pairs the bids' runs are cut from
EXTRA_POOL = 1 << 22  # bytes of the periodic `extra` character pool
# The `extra` alphabet of nexmark-flink's data: lower-case letters and 'H'..'`'.
_EXTRA_ALPHABET = np.frombuffer(bytes(range(ord("a"), ord("z") + 1)) + bytes(range(ord("H"), ord("`") + 1)), np.uint8)

_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def _splitmix_int(x: int) -> int:
    """splitmix64 of one Python int (for per-field and per-chunk keys)."""
    z = (x + _GOLDEN) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer over a uint64 array (in place; wraps modulo 2**64)."""
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _below(bits32: np.ndarray, bound: np.ndarray | int) -> np.ndarray:
    """Uniform integers in [0, bound) from 32 random bits (Lemire's multiply-shift), int64."""
    return ((bits32 * np.asarray(bound, dtype=np.uint64)) >> np.uint64(32)).astype(np.int64)


def _lo(h: np.ndarray) -> np.ndarray:
    return h & np.uint64(0xFFFFFFFF)


def _hi(h: np.ndarray) -> np.ndarray:
    return h >> np.uint64(32)


def _unit(h: np.ndarray) -> np.ndarray:
    """Uniform doubles in [0, 1) from 53 random bits."""
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


@frozen_dataclass
class NexmarkConfig:
    """The generator's parameters (the connector parses them from the WITH options)."""

    seed: int = 0
    base_time_ms: int = 0
    rate: int = 10_000  # events per second of event time ('first-event.rate')
    person_proportion: int = 1
    auction_proportion: int = 3
    bid_proportion: int = 46
    hot_auction_ratio: int = 2
    hot_bidders_ratio: int = 4
    hot_sellers_ratio: int = 4
    person_avg_size: int = 200
    auction_avg_size: int = 500
    bid_avg_size: int = 100
    chunk_size: int = 0  # 0: about CHUNK_SIZE, rounded to a multiple of the total proportion

    @property
    def total_proportion(self) -> int:
        return self.person_proportion + self.auction_proportion + self.bid_proportion

    @property
    def inter_event_delay_us(self) -> float:
        return 1_000_000.0 / self.rate


class Pools:
    """Random strings picked by index; built once per seed (cached: they are immutable)."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed & 0xFFFFFFFF, 0x6E65786D])
        self.names = pa.array([f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES])
        self.cities = pa.array(US_CITIES)
        self.states = pa.array(US_STATES)
        self.emails = pa.array(
            [
                f"{a}@{b}.com"
                for a, b in zip(_random_strings(rng, STRING_POOL, 7), _random_strings(rng, STRING_POOL, 5), strict=True)
            ]
        )
        self.items = pa.array(_random_strings(rng, STRING_POOL, 20))
        self.descriptions = pa.array(_random_strings(rng, STRING_POOL, 100))
        # UTF-8 lengths, for the `extra` padding that makes events average their target size.
        self.names_len = _lengths(self.names)
        self.cities_len = _lengths(self.cities)
        self.states_len = _lengths(self.states)
        self.emails_len = _lengths(self.emails)
        self.items_len = _lengths(self.items)
        self.descriptions_len = _lengths(self.descriptions)
        # The 10,000 cached channels and the four hot ones, then the pool of pairs.
        channels = [f"channel-{j}" for j in range(CHANNELS_NUMBER)] + list(HOT_CHANNELS)
        has_id = rng.integers(0, 10, size=CHANNELS_NUMBER) > 0
        parts = _random_strings(rng, 3 * len(channels), 5, "_")
        urls = [
            f"https://www.nexmark.com/{parts[3 * j]}/{parts[3 * j + 1]}/{parts[3 * j + 2]}/item.htm?query=1"
            + (f"&channel_id={_reversed_int32(j)}" if j < CHANNELS_NUMBER and has_id[j] else "")
            for j in range(len(channels))
        ]
        hot = rng.integers(0, 2, size=CHANNEL_POOL) > 0
        pick = np.where(
            hot,
            CHANNELS_NUMBER + rng.integers(0, len(HOT_CHANNELS), size=CHANNEL_POOL),
            rng.integers(0, CHANNELS_NUMBER, size=CHANNEL_POOL),
        )
        self.channel_seq = _offsets_and_data(pa.array(channels).take(pa.array(pick)))
        self.url_seq = _offsets_and_data(pa.array(urls).take(pa.array(pick)))
        one = rng.integers(0, len(_EXTRA_ALPHABET), size=EXTRA_POOL, dtype=np.uint8)
        chars = _EXTRA_ALPHABET[one]
        self.extra_np = np.concatenate([chars, chars])  # doubled: any window <= EXTRA_POOL is contiguous
        self.extra_buf = pa.py_buffer(self.extra_np)


@functools.lru_cache(maxsize=4)
def pools_for(seed: int) -> Pools:
    return Pools(seed)


def _random_strings(rng: np.random.Generator, count: int, max_len: int, special: str = " ") -> list[str]:
    """nexmark's nextString: length 3 .. max_len - 1, letters, `special` 1 time in 13, trimmed."""
    lens = 3 + rng.integers(0, max_len - 3, size=count)
    letters = rng.integers(ord("a"), ord("z") + 1, size=(count, max_len - 1), dtype=np.uint8)
    letters[rng.integers(0, 13, size=letters.shape) == 0] = ord(special)
    raw = letters.tobytes()
    width = max_len - 1
    out = [raw[r * width : r * width + int(n)].decode("ascii") for r, n in enumerate(lens)]
    return [s.strip() for s in out] if special == " " else out


def _reversed_int32(j: int) -> int:
    """abs(Integer.reverse(j)) as in nexmark's channel cache."""
    r = int(f"{j & 0xFFFFFFFF:032b}"[::-1], 2)
    return abs(r - (1 << 32) if r >= 1 << 31 else r)


def _lengths(arr: pa.Array) -> np.ndarray:
    off = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]
    return np.diff(off).astype(np.int64)


def _offsets_and_data(arr: pa.Array) -> tuple[np.ndarray, pa.Buffer]:
    off = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]
    return off, arr.buffers()[2]


def _string_array(offsets: np.ndarray, data: pa.Buffer, validity: pa.Buffer | None) -> pa.Array:
    n = len(offsets) - 1
    return pa.Array.from_buffers(pa.string(), n, [validity, pa.py_buffer(offsets.astype(np.int32, copy=False)), data])


class _Layout:
    """What every chunk shares: event kinds, their positions and validity bitmaps, and the
    last person/auction ids relative to the chunk's first epoch."""

    def __init__(self, cfg: NexmarkConfig) -> None:
        size, total = cfg.chunk_size, cfg.total_proportion
        pp, ap = cfg.person_proportion, cfg.auction_proportion
        if size % total:
            raise ValueError("chunk_size must be a multiple of the total proportion")
        self.j = np.arange(size, dtype=np.int64)
        epoch, off = np.divmod(self.j + 2, total)  # chunk starts are aligned: (k0 + 2) % total == 2 % total
        shift = 2 // total
        epoch -= shift
        etype = np.where(off < pp, 0, np.where(off < pp + ap, 1, 2)).astype(np.int32)
        self.etype = pa.array(etype)
        self.last_p = epoch * pp + np.minimum(off, pp - 1) if pp > 0 else np.full(size, -1, np.int64)
        a_off = np.where((off < pp) | (off >= pp + ap), ap - 1, off - pp)
        self.last_a = np.where(off < pp, epoch - 1, epoch) * ap + a_off
        self.is_p, self.is_a, self.is_b = etype == 0, etype == 1, etype == 2
        self.pos_p, self.pos_a = np.flatnonzero(self.is_p), np.flatnonzero(self.is_a)
        self.valid_p, self.valid_a, self.valid_b = (_bitmap(m) for m in (self.is_p, self.is_a, self.is_b))
        self.cnt_p, self.cnt_a = _count_before(self.is_p), _count_before(self.is_a)


class NexmarkGenerator:
    """Builds the columns of chunk `c` (events `c * chunk_size` up to the next chunk)."""

    def __init__(self, cfg: NexmarkConfig) -> None:
        for key in ("person_proportion", "auction_proportion", "bid_proportion"):
            if getattr(cfg, key) < 0:
                raise ValueError(f"{key} must not be negative")
        if cfg.total_proportion <= 0:
            raise ValueError("the proportions must not all be zero")
        if cfg.rate <= 0:
            raise ValueError("the event rate must be positive")
        if cfg.chunk_size <= 0:
            cfg = dataclasses.replace(cfg, chunk_size=cfg.total_proportion * max(1, CHUNK_SIZE // cfg.total_proportion))
        self.cfg = cfg
        self.pools = pools_for(cfg.seed)
        self._keys = {f: np.uint64(_splitmix_int((cfg.seed * 1_000_003 + f) & _M64)) for f in range(64)}
        delay = cfg.inter_event_delay_us
        self._delay_int = int(delay) if float(delay).is_integer() else 0
        self._layout = _Layout(cfg)

    # ------------------------------------------------------------------ scalars
    def time_offset_ms(self, k: int) -> int:
        """Event time of event k (0-based) minus the base time, in ms."""
        return int((k + 1) * self.cfg.inter_event_delay_us) // 1000

    def _rand(self, kg: np.ndarray, field: int) -> np.ndarray:
        """64 random bits per event for one field; `kg` = event numbers * golden ratio (uint64)."""
        return _mix(kg + self._keys[field])

    # ------------------------------------------------------------------ chunk
    def chunk(self, c: int, kinds: frozenset[str]) -> dict[str, pa.Array]:
        """`event_type` plus the struct columns named in `kinds` ('person', 'auction', 'bid'),
        as Arrow arrays in the natural Nexmark types, for chunk c."""
        cfg = self.cfg
        lay = self._layout
        size = cfg.chunk_size
        k0 = c * size
        k = lay.j + k0
        kg = k.astype(np.uint64) * np.uint64(_GOLDEN)
        # chunk_size is a multiple of the total proportion: every chunk has the same layout
        # of event kinds, and only the epoch (ids advance by one per epoch) moves.
        epoch0 = (k0 + 2) // cfg.total_proportion
        last_p = lay.last_p + epoch0 * cfg.person_proportion
        last_a = lay.last_a + epoch0 * cfg.auction_proportion
        if self._delay_int:
            times = (k + 1) * self._delay_int // 1000 + cfg.base_time_ms
        else:
            times = np.floor((k + 1) * cfg.inter_event_delay_us).astype(np.int64) // 1000 + cfg.base_time_ms
        pos_p, pos_a = lay.pos_p, lay.pos_a
        out: dict[str, pa.Array] = {"event_type": lay.etype}

        # Extra lengths of every event (bids by formula, persons/auctions from their sizes).
        extra_len = self._extra_len(32, cfg.bid_avg_size, _lo(self._rand(kg, 4)))
        person = self._persons(kg[pos_p], last_p[pos_p]) if len(pos_p) else None
        auction = (
            self._auctions(k[pos_a], kg[pos_a], last_a[pos_a], last_p[pos_a], times[pos_a]) if len(pos_a) else None
        )
        if person is not None:
            extra_len[pos_p] = person.pop("__extra_len")
        if auction is not None:
            extra_len[pos_a] = auction.pop("__extra_len")
        ext_off = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(extra_len, out=ext_off[1:])
        ext_data = self._extra_data(c, int(ext_off[-1]))
        ext_off32 = pa.py_buffer(ext_off.astype(np.int32))
        time_buf = pa.py_buffer(times)

        def shared(valid: pa.Buffer) -> dict[str, pa.Array]:
            return {
                "dateTime": pa.Array.from_buffers(pa.timestamp("ms"), size, [valid, time_buf]),
                "extra": pa.Array.from_buffers(pa.string(), size, [valid, ext_off32, ext_data]),
            }

        if "person" in kinds:
            valid, cnt = lay.valid_p, lay.cnt_p
            cols = {
                "id": _scatter_int(size, pos_p, last_p[pos_p] + FIRST_PERSON_ID, valid),
                **{f: _expand(person[f] if person else None, cnt, valid) for f in _PERSON_STR},
                **shared(valid),
            }
            out["person"] = _struct(cols, _PERSON_FIELDS, valid, size)
        if "auction" in kinds:
            valid, cnt = lay.valid_a, lay.cnt_a
            cols = {
                "id": _scatter_int(size, pos_a, last_a[pos_a] + FIRST_AUCTION_ID, valid),
                "itemName": _expand(auction["itemName"] if auction else None, cnt, valid),
                "description": _expand(auction["description"] if auction else None, cnt, valid),
                **{
                    f: _scatter_int(size, pos_a, auction[f] if auction else np.zeros(0, np.int64), valid)
                    for f in ("initialBid", "reserve", "seller", "category")
                },
                "expires": _scatter_int(
                    size, pos_a, auction["expires"] if auction else np.zeros(0, np.int64), valid, pa.timestamp("ms")
                ),
                **shared(valid),
            }
            out["auction"] = _struct(cols, _AUCTION_FIELDS, valid, size)
        if "bid" in kinds:
            valid = lay.valid_b
            out["bid"] = _struct(
                {**self._bids(c, kg, last_a, last_p, valid), **shared(valid)}, _BID_FIELDS, valid, size
            )
        return out

    # ------------------------------------------------------------------ kinds
    def _bids(
        self, c: int, kg: np.ndarray, last_a: np.ndarray, last_p: np.ndarray, valid: pa.Buffer
    ) -> dict[str, pa.Array]:
        cfg = self.cfg
        size = len(kg)
        h1, h2 = self._rand(kg, 1), self._rand(kg, 2)
        hot_a = _below(_lo(h1), cfg.hot_auction_ratio) > 0
        hot_auction = (np.maximum(last_a, 0) // HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO
        auction = np.where(hot_a, hot_auction, self._next_auction(last_a, _hi(h1))) + FIRST_AUCTION_ID
        hot_b = _below(_lo(h2), cfg.hot_bidders_ratio) > 0
        hot_bidder = (np.maximum(last_p, 0) // HOT_PERSON_RATIO) * HOT_PERSON_RATIO + 1
        bidder = np.where(hot_b, hot_bidder, self._next_person(last_p, _hi(h2))) + FIRST_PERSON_ID
        price = _price(self._rand(kg, 3))
        start = _splitmix_int((cfg.seed << 20) ^ (c * 2 + 1)) % (CHANNEL_POOL - size + 1)
        return {
            "auction": _int_array(auction, valid),
            "bidder": _int_array(bidder, valid),
            "price": _int_array(price, valid),
            "channel": _run(self.pools.channel_seq, start, size, valid),
            "url": _run(self.pools.url_seq, start, size, valid),
        }

    def _persons(self, kg: np.ndarray, last_p: np.ndarray) -> dict[str, np.ndarray | pa.Array]:
        p = self.pools
        h1, h2, h3 = self._rand(kg, 11), self._rand(kg, 12), self._rand(kg, 13)
        name_i = _below(_lo(h1), len(p.names))
        email_i = _below(_hi(h1), len(p.emails))
        city_i = _below(_lo(h2), len(p.cities))
        state_i = _below(_hi(h2), len(p.states))
        size = 8 + p.names_len[name_i] + p.emails_len[email_i] + 19 + p.cities_len[city_i] + p.states_len[state_i]
        return {
            "name": p.names.take(pa.array(name_i)),
            "emailAddress": p.emails.take(pa.array(email_i)),
            "creditCard": _credit_cards(h3),
            "city": p.cities.take(pa.array(city_i)),
            "state": p.states.take(pa.array(state_i)),
            "__extra_len": self._extra_len(size, self.cfg.person_avg_size, _hi(h3)),
        }

    def _auctions(
        self, k: np.ndarray, kg: np.ndarray, last_a: np.ndarray, last_p: np.ndarray, times: np.ndarray
    ) -> dict[str, np.ndarray | pa.Array]:
        cfg, p = self.cfg, self.pools
        h1, h2, h3, h4 = (self._rand(kg, f) for f in (21, 22, 23, 24))
        item_i = _below(_lo(h1), len(p.items))
        desc_i = _below(_hi(h1), len(p.descriptions))
        initial = _price(h2)
        reserve = initial + _price(h3)
        hot_s = _below(_lo(h4), cfg.hot_sellers_ratio) > 0
        seller = np.where(
            hot_s, (np.maximum(last_p, 0) // HOT_PERSON_RATIO) * HOT_PERSON_RATIO, self._next_person(last_p, _hi(h4))
        )
        h5 = self._rand(kg, 25)
        category = FIRST_CATEGORY_ID + _below(_lo(h5), NUM_CATEGORIES)
        # Auctions last, on average, as long as `events_for_auctions` events take.
        events_for_auctions = (NUM_IN_FLIGHT_AUCTIONS * cfg.total_proportion) // max(cfg.auction_proportion, 1)
        future = (
            cfg.base_time_ms
            + np.floor((k + 1 + events_for_auctions) * cfg.inter_event_delay_us).astype(np.int64) // 1000
        )
        horizon = np.maximum((future - times) * 2, 1)
        expires = times + 1 + np.floor(_unit(self._rand(kg, 26)) * horizon).astype(np.int64)
        size = 8 + p.items_len[item_i] + p.descriptions_len[desc_i] + 40
        return {
            "itemName": p.items.take(pa.array(item_i)),
            "description": p.descriptions.take(pa.array(desc_i)),
            "initialBid": initial,
            "reserve": reserve,
            "seller": seller + FIRST_PERSON_ID,
            "category": category,
            "expires": expires,
            "__extra_len": self._extra_len(size, cfg.auction_avg_size, _hi(h5)),
        }

    # ------------------------------------------------------------------ helpers
    def _next_person(self, last_p: np.ndarray, bits32: np.ndarray) -> np.ndarray:
        """Uniform among the last NUM_ACTIVE_PEOPLE people plus PERSON_ID_LEAD ahead (base 0)."""
        num = last_p + 1
        active = np.minimum(num, NUM_ACTIVE_PEOPLE)
        return num - active + _below(bits32, active + PERSON_ID_LEAD)

    def _next_auction(self, last_a: np.ndarray, bits32: np.ndarray) -> np.ndarray:
        """Uniform among the last NUM_IN_FLIGHT_AUCTIONS auctions plus AUCTION_ID_LEAD ahead (base 0)."""
        lo = np.maximum(last_a - NUM_IN_FLIGHT_AUCTIONS, 0)
        return lo + _below(bits32, np.maximum(last_a - lo + 1 + AUCTION_ID_LEAD, 1))

    @staticmethod
    def _extra_len(current: np.ndarray | int, avg: int, bits32: np.ndarray) -> np.ndarray:
        """nexmark's nextExtra: a length making the event average `avg` bytes (±20%)."""
        desired = avg - np.asarray(current, dtype=np.int64)
        delta = np.floor(desired * 0.2 + 0.5).astype(np.int64)
        extra = desired - delta + _below(bits32, np.maximum(2 * delta, 1))
        extra = np.where(delta > 0, extra, desired)
        return np.broadcast_to(np.where(desired < 0, 0, extra), bits32.shape).astype(np.int64)

    def _extra_data(self, c: int, total: int) -> pa.Buffer:
        """`total` bytes of the periodic character pool, starting at a random place for chunk c."""
        start = _splitmix_int((self.cfg.seed << 20) ^ (c * 2)) % EXTRA_POOL
        if total <= EXTRA_POOL:
            return self.pools.extra_buf.slice(start, total)
        return pa.py_buffer(np.take(self.pools.extra_np[:EXTRA_POOL], np.arange(start, start + total), mode="wrap"))


_PERSON_STR = ("name", "emailAddress", "creditCard", "city", "state")
_PERSON_FIELDS = ("id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra")
_AUCTION_FIELDS = (
    "id",
    "itemName",
    "description",
    "initialBid",
    "reserve",
    "dateTime",
    "expires",
    "seller",
    "category",
    "extra",
)
_BID_FIELDS = ("auction", "bidder", "price", "channel", "url", "dateTime", "extra")
FIELDS = {"person": _PERSON_FIELDS, "auction": _AUCTION_FIELDS, "bid": _BID_FIELDS}


def _price(h: np.ndarray) -> np.ndarray:
    """round(10^(6u) * 100): log-uniform cents between 100 and 100,000,000."""
    return np.floor(np.power(10.0, _unit(h) * 6.0) * 100.0 + 0.5).astype(np.int64)


def _credit_cards(h: np.ndarray) -> pa.Array:
    """Four space-separated groups of four digits, from 16 random bits per group."""
    m = len(h)
    chars = np.full((m, 19), ord(" "), dtype=np.uint8)
    for g in range(4):  # four groups, not a loop over rows
        v = ((h >> np.uint64(16 * g)) & np.uint64(0xFFFF)) * np.uint64(10_000) >> np.uint64(16)
        v = v.astype(np.int64)
        for d in range(4):
            chars[:, g * 5 + d] = ord("0") + (v // 10 ** (3 - d)) % 10
    offsets = np.arange(0, 19 * (m + 1), 19, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), m, [None, pa.py_buffer(offsets), pa.py_buffer(chars)])


def _bitmap(mask: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.packbits(mask, bitorder="little"))


def _count_before(mask: np.ndarray) -> np.ndarray:
    cnt = np.zeros(len(mask) + 1, dtype=np.int64)
    np.cumsum(mask, out=cnt[1:])
    return cnt


def _int_array(values: np.ndarray, valid: pa.Buffer, typ: pa.DataType = pa.int64()) -> pa.Array:
    return pa.Array.from_buffers(typ, len(values), [valid, pa.py_buffer(values.astype(np.int64, copy=False))])


def _scatter_int(
    size: int, pos: np.ndarray, values: np.ndarray, valid: pa.Buffer, typ: pa.DataType = pa.int64()
) -> pa.Array:
    full = np.zeros(size, dtype=np.int64)
    full[pos] = values
    return _int_array(full, valid, typ)


def _expand(compact: pa.Array | None, cnt: np.ndarray, valid: pa.Buffer) -> pa.Array:
    """A full-length string child from the values of the rows of one kind: row j gets the
    value number cnt[j] (rows of other kinds get empty, null strings)."""
    size = len(cnt) - 1
    if compact is None or len(compact) == 0:
        return pa.Array.from_buffers(
            pa.string(), size, [valid, pa.py_buffer(np.zeros(size + 1, np.int32)), pa.py_buffer(b"")]
        )
    off, data = _offsets_and_data(compact)
    return _string_array(off[cnt], data, valid)


def _run(seq: tuple[np.ndarray, pa.Buffer], start: int, size: int, valid: pa.Buffer) -> pa.Array:
    """Entries start .. start+size of a pooled string sequence, without copying the bytes."""
    off, data = seq
    window = off[start : start + size + 1]
    base = int(window[0])
    return _string_array(window - base, data.slice(base), valid)


def _struct(cols: dict[str, pa.Array], order: tuple[str, ...], valid: pa.Buffer, size: int) -> pa.Array:
    children = [cols[f] for f in order]
    typ = pa.struct([pa.field(f, a.type) for f, a in zip(order, children, strict=True)])
    return pa.Array.from_buffers(typ, size, [valid], children=children)
