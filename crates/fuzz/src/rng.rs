//! A small seeded generator: every run is reproducible from its seed. The numbers come from
//! the workspace's SplitMix64 (`net::SimRng`); the shapes fuzzing needs are built here.

use net::SimRng;

pub struct Rng(SimRng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SimRng::new(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        (self.next_u64() % n as u64) as usize
    }

    /// True once in `n` draws on average.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }

    /// Random bytes of a [`size`](Self::size)d length.
    pub fn blob(&mut self, max: usize) -> Vec<u8> {
        let n = self.size(max);
        self.bytes(n)
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A length skewed towards small values: mostly under 16, sometimes up to `max`.
    pub fn size(&mut self, max: usize) -> usize {
        match self.below(10) {
            0..=6 => self.below(16.min(max + 1)),
            7 | 8 => self.below(256.min(max + 1)),
            _ => self.below(max + 1),
        }
    }

    /// An integer likely to sit on a boundary: 0, ±1, the extremes of each width, or random.
    pub fn edgy_i64(&mut self) -> i64 {
        const EDGES: [i64; 12] = [
            0,
            1,
            -1,
            i8::MAX as i64,
            i8::MIN as i64,
            i16::MAX as i64,
            i16::MIN as i64,
            i32::MAX as i64,
            i32::MIN as i64,
            i64::MAX,
            i64::MIN,
            u32::MAX as i64,
        ];
        if self.one_in(2) {
            *self.pick(&EDGES)
        } else {
            self.next_u64() as i64
        }
    }
}
