"""tbd's synthetic data streams, reproduced bit for bit in Python.

The peer benchmark must train on the same batches as `tbd run`, and for the
variable-length workload (seq2seq) the batch shapes decide the cost of a step.
tbd draws its text with std::mt19937_64 and libstdc++'s distributions
(GCC 12: the compiler of build/tbd), and its tensors with LibTorch's CPU
generator; both are reproduced here. The driver checks the result: the samples
of every timed iteration (seq2seq: target tokens per batch) must equal those in
tbd's result JSON.

Sources mirrored: src/tbd/core/rng.cpp, src/tbd/core/options.cpp (data_seed),
src/tbd/data/synthetic_text.cpp, length_batches.cpp, translation_batches.cpp,
token_batch.cpp (zipf_token_pool).
"""
import bisect
import math

MASK64 = (1 << 64) - 1


def derive_seed(seed, stream):
    """tbd::derive_seed: splitmix64 of seed + golden-ratio step * (stream + 1)."""
    z = (seed + 0x9E3779B97F4A7C15 * (stream + 1)) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def data_seed(seed=42, rank=0):
    """RunOptions::data_seed(): the seed of every synthetic data stream of rank 0."""
    return derive_seed(seed, 0xDA7A0000 + rank)


class MT19937_64:
    """std::mt19937_64."""

    def __init__(self, seed):
        mt = [seed & MASK64]
        for i in range(1, 312):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.mt, self.index = mt, 312

    def _twist(self):
        mt = self.mt
        for i in range(312):
            x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % 312] & 0x7FFFFFFF)
            xa = x >> 1
            if x & 1:
                xa ^= 0xB5026F5AA96619E9
            mt[i] = mt[(i + 156) % 312] ^ xa
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & MASK64


def canonical(rng):
    """std::generate_canonical<double, 53>: one 64-bit draw, scaled into [0, 1)."""
    r = float(rng()) / 18446744073709551616.0
    return r if r < 1.0 else math.nextafter(1.0, 0.0)


class LogNormal:
    """std::lognormal_distribution<double>: exp(s * N(0, 1) + m), where the normal
    is libstdc++'s Marsaglia polar method, which keeps its second value."""

    def __init__(self, m, s):
        self.m, self.s, self.saved = m, s, None

    def __call__(self, rng):
        if self.saved is not None:
            z, self.saved = self.saved, None
        else:
            while True:
                x = 2.0 * canonical(rng) - 1.0
                y = 2.0 * canonical(rng) - 1.0
                r2 = x * x + y * y
                if 0.0 < r2 <= 1.0:
                    break
            mult = math.sqrt(-2 * math.log(r2) / r2)
            self.saved, z = x * mult, y * mult
        return math.exp(self.s * z + self.m)


class ZipfWords:
    """tbd::ZipfWords: std::discrete_distribution over weights 1/(r+1), offset by `first`."""

    def __init__(self, first, vocabulary):
        weights = [1.0 / (r + 1) for r in range(max(vocabulary - first, 1))]
        total = 0.0
        for w in weights:  # std::accumulate: left to right
            total += w
        cumulative, acc = [], 0.0
        for w in weights:  # normalise, then std::partial_sum
            acc += w / total
            cumulative.append(acc)
        cumulative[-1] = 1.0
        self.first, self.cumulative = first, cumulative

    def __call__(self, rng):
        return self.first + bisect.bisect_left(self.cumulative, canonical(rng))


def zipf_token_pool(seed, vocabulary, batch_size, context, batches=4):
    """tbd::zipf_token_pool (gpt, llama): `batches` [B, context + 1] windows of
    Zipf token ids from std::mt19937_64, each split into inputs and next-token
    targets. `seed` is already salted by the workload (derive_seed(data_seed, salt))."""
    import torch  # only here: the rest of this module is plain Python

    rng = MT19937_64(seed)
    words = ZipfWords(0, vocabulary)
    pool = []
    for _ in range(batches):
        window = torch.tensor([[words(rng) for _ in range(context + 1)] for _ in range(batch_size)])
        pool.append((window[:, :-1].contiguous(), window[:, 1:].contiguous()))
    return pool


def _bounded(rng, n):
    """std::uniform_int_distribution<uint64_t>{0, n - 1} on a 64-bit engine
    (libstdc++'s Lemire method with 128-bit products)."""
    product = rng() * n
    low = product & MASK64
    if low < n:
        threshold = ((1 << 64) - n) % n
        while low < threshold:
            product = rng() * n
            low = product & MASK64
    return product >> 64


def shuffle(items, rng):
    """std::shuffle (libstdc++ 12): two swap positions per draw when they fit in 64 bits."""
    n = len(items)
    if n == 0:
        return
    assert (MASK64 // n) >= n, "only the paired-draw branch is reproduced"
    i = 1
    if n % 2 == 0:
        j = _bounded(rng, 2)
        items[i], items[j] = items[j], items[i]
        i += 1
    while i != n:
        swap_range = i + 1
        x = _bounded(rng, swap_range * (swap_range + 1))
        a, b = x // (swap_range + 1), x % (swap_range + 1)
        items[i], items[a] = items[a], items[i]
        i += 1
        items[i], items[b] = items[b], items[i]
        i += 1


def _lround(x):
    """std::lround for x >= 0: halves away from zero."""
    whole = math.floor(x)
    return int(whole) + (1 if x - whole >= 0.5 else 0)


def sentence_pairs(count, source_vocabulary, target_vocabulary, first_word, median_length, max_length, seed):
    """tbd::synthetic_sentence_pairs: (source ids, target ids) lists."""
    rng = MT19937_64(seed)
    source_words, target_words = ZipfWords(first_word, source_vocabulary), ZipfWords(first_word, target_vocabulary)
    source_length, ratio = LogNormal(math.log(median_length), 0.6), LogNormal(math.log(1.2), 0.2)

    def clamp(x):
        return min(max(_lround(x), 1), max_length)

    pairs = []
    for _ in range(count):
        s = source_length(rng)
        ls, lt = clamp(s), clamp(s * ratio(rng))
        src = [source_words(rng) for _ in range(ls)]
        tgt = [target_words(rng) for _ in range(lt)]
        pairs.append((src, tgt))
    return pairs


def length_batches(lengths, batch_size, seed, epoch=0):
    """tbd::LengthBatches (sentence limit), the plan of one epoch: lists of example indices."""
    rng = MT19937_64(derive_seed(seed, epoch))
    order = list(range(len(lengths)))
    shuffle(order, rng)  # random order among equal lengths
    order.sort(key=lambda i: lengths[i])  # stable, as std::stable_sort
    plan = [order[k:k + batch_size] for k in range(0, len(order), batch_size)]
    shuffle(plan, rng)
    return plan
