// Generic code, a trait impl and a closure, each kept out of line, for the names
// kestrel's report must show as rustfilt would.
use std::collections::HashMap;
use std::hint::black_box;

pub trait Step {
    fn step(&mut self, n: u64) -> u64;
}

pub struct Grid<T> {
    cells: Vec<T>,
}

impl Step for Grid<u64> {
    #[inline(never)]
    fn step(&mut self, n: u64) -> u64 {
        let len = self.cells.len() as u64;
        let mut acc = 0u64;
        for i in 0..n {
            let c = &mut self.cells[(i % len) as usize];
            *c = c.wrapping_mul(6364136223846793005).wrapping_add(i);
            acc ^= *c;
        }
        acc
    }
}

#[inline(never)]
fn tally<K: std::hash::Hash + Eq + Copy>(keys: &[K], rounds: usize) -> usize {
    let mut m: HashMap<K, usize> = HashMap::new();
    for _ in 0..rounds {
        for k in keys {
            *m.entry(*k).or_insert(0) += 1;
        }
    }
    m.len()
}

fn main() {
    let rounds: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(40);
    let mut g = Grid { cells: vec![1u64; 4096] };
    let keys: Vec<u32> = (0..512).collect();
    let mut total = 0u64;
    for _ in 0..rounds {
        total ^= black_box(&mut g).step(black_box(2_000_000));
        total ^= tally(black_box(&keys), 200) as u64;
    }
    println!("{total}");
}
