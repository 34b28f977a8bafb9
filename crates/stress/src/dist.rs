//! cassandra-stress distributions: `FIXED(v)`, `UNIFORM(min..max)`,
//! `GAUSSIAN(min..max[,stdvrng])` / `GAUSSIAN(min..max,mean,stdev)`, `EXP(min..max)`,
//! `EXTREME(min..max,shape)`, `SEQ(min..max)`, each optionally inverted with `~`, and with cassandra-stress's
//! aliases and `k`/`m`/`b` number suffixes. Samplers draw from `java.util.Random` exactly as
//! cassandra-stress's uniform and gaussian distributions do, so seeded draws (key and value
//! generation) are identical to Cassandra's tool; exponential and extreme draws use
//! inversion, which has the same distribution but not the same sequence.

use std::fmt;

use crate::javarand::JavaRandom;

/// A parsed distribution definition.
#[derive(Debug, Clone, PartialEq)]
pub struct DistSpec {
    pub kind: DistKind,
    pub inverted: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DistKind {
    Fixed(i64),
    Uniform {
        min: i64,
        max: i64,
    },
    Gaussian {
        min: i64,
        max: i64,
        mean: f64,
        stdev: f64,
    },
    Exp {
        min: i64,
        max: i64,
        mean: f64,
    },
    Extreme {
        min: i64,
        max: i64,
        shape: f64,
        scale: f64,
    },
    /// `SEQ(min..max)`: min, min+1, … wrapping; seeding moves the position.
    Seq {
        min: i64,
        max: i64,
    },
}

impl DistSpec {
    pub fn fixed(v: i64) -> DistSpec {
        DistSpec {
            kind: DistKind::Fixed(v),
            inverted: false,
        }
    }

    pub fn uniform(min: i64, max: i64) -> DistSpec {
        DistSpec {
            kind: DistKind::Uniform { min, max },
            inverted: false,
        }
    }

    /// `gaussian(min..max)`: mean in the middle, three standard deviations to each edge.
    pub fn gaussian(min: i64, max: i64) -> DistSpec {
        let mean = (min + max) as f64 / 2.0;
        let stdev = ((max - min) as f64 / 2.0) / 3.0;
        DistSpec {
            kind: DistKind::Gaussian {
                min,
                max,
                mean,
                stdev,
            },
            inverted: false,
        }
    }

    /// The smallest and largest values the distribution draws.
    fn bounds(&self) -> (i64, i64) {
        match self.kind {
            DistKind::Fixed(v) => (v, v),
            DistKind::Uniform { min, max }
            | DistKind::Gaussian { min, max, .. }
            | DistKind::Exp { min, max, .. }
            | DistKind::Extreme { min, max, .. }
            | DistKind::Seq { min, max, .. } => (min, max),
        }
    }

    pub fn min(&self) -> i64 {
        self.bounds().0
    }

    pub fn max(&self) -> i64 {
        self.bounds().1
    }

    pub fn is_fixed(&self) -> bool {
        matches!(self.kind, DistKind::Fixed(_))
    }

    /// Parses `[~]NAME(args)` as cassandra-stress's `OptionDistribution.get` does.
    pub fn parse(spec: &str) -> Result<DistSpec, String> {
        let illegal = || format!("Illegal distribution specification: {spec}");
        let (inverted, rest) = match spec.strip_prefix('~') {
            Some(r) => (true, r),
            None => (false, spec),
        };
        let open = rest.find('(').ok_or_else(illegal)?;
        let body = rest[open + 1..].strip_suffix(')').ok_or_else(illegal)?;
        let name = rest[..open].to_ascii_lowercase();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphabetic()) || body.is_empty() {
            return Err(illegal());
        }
        let params: Vec<&str> = body.split(',').filter(|p| !p.is_empty()).collect();
        let kind = parse_kind(&name, &params)?;
        Ok(DistSpec { kind, inverted })
    }
}

fn parse_kind(name: &str, params: &[&str]) -> Result<DistKind, String> {
    let invalid = || format!("Invalid parameter list for {name} distribution: {params:?}");
    match name {
        "fixed" if params.len() == 1 => {
            Ok(DistKind::Fixed(parse_long(params[0]).ok_or_else(invalid)?))
        }
        "uniform" if params.len() == 1 => {
            let (min, max) = parse_bounds(params[0]).ok_or_else(invalid)?;
            Ok(DistKind::Uniform { min, max })
        }
        "gaussian" | "gauss" | "normal" | "norm" if (1..=3).contains(&params.len()) => {
            parse_gaussian(params).ok_or_else(invalid)
        }
        "exp" if params.len() == 1 => {
            let (min, max) = parse_bounds(params[0]).ok_or_else(invalid)?;
            // Exponential(1)'s inverse CDF at 1 - sqrt(1/(max-min)) is ln(max-min)/2.
            let mean = (max - min) as f64 / (0.5 * ((max - min) as f64).ln());
            Ok(DistKind::Exp { min, max, mean })
        }
        "extreme" | "extr" | "weibull" if params.len() == 2 => {
            let (min, max) = parse_bounds(params[0]).ok_or_else(invalid)?;
            let shape: f64 = params[1].trim().parse().map_err(|_| invalid())?;
            let edge = (0.5 * ((max - min) as f64).ln()).powf(1.0 / shape);
            Ok(DistKind::Extreme {
                min,
                max,
                shape,
                scale: (max - min) as f64 / edge,
            })
        }
        "seq" if params.len() == 1 => {
            let (min, max) = parse_bounds(params[0]).ok_or_else(invalid)?;
            Ok(DistKind::Seq { min, max })
        }
        "seq" | "fixed" | "uniform" | "gaussian" | "gauss" | "normal" | "norm" | "exp"
        | "extreme" | "extr" | "weibull" => Err(invalid()),
        _ => Err(format!("Illegal distribution type: {name}")),
    }
}

fn parse_gaussian(params: &[&str]) -> Option<DistKind> {
    let (min, max) = parse_bounds(params[0])?;
    let (mean, stdev) = if params.len() == 3 {
        (
            params[1].trim().parse().ok()?,
            params[2].trim().parse().ok()?,
        )
    } else {
        let to_edge: f64 = match params.get(1) {
            Some(p) => p.trim().parse().ok()?,
            None => 3.0,
        };
        (
            (min + max) as f64 / 2.0,
            ((max - min) as f64 / 2.0) / to_edge,
        )
    };
    Some(DistKind::Gaussian {
        min,
        max,
        mean,
        stdev,
    })
}

/// `a..b` (any number of dots) into (a, b), with number suffixes.
pub fn parse_bounds(s: &str) -> Option<(i64, i64)> {
    let dots = s.find("..")?;
    let min = parse_long(&s[..dots])?;
    let max = parse_long(s[dots..].trim_start_matches('.'))?;
    (min <= max).then_some((min, max))
}

/// A long with an optional `k`, `m` or `b` (thousand, million, billion) suffix.
pub fn parse_long(s: &str) -> Option<i64> {
    let s = s.trim().to_ascii_lowercase();
    let (digits, mult) = match s.as_bytes().last()? {
        b'b' => (&s[..s.len() - 1], 1_000_000_000),
        b'm' => (&s[..s.len() - 1], 1_000_000),
        b'k' => (&s[..s.len() - 1], 1_000),
        _ => (&s[..], 1),
    };
    digits.parse::<i64>().ok()?.checked_mul(mult)
}

impl fmt::Display for DistSpec {
    /// The form cassandra-stress prints in its settings dump.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.inverted {
            f.write_str("Inverted ")?;
        }
        match self.kind {
            DistKind::Fixed(v) => write!(f, "Fixed:  key={v}"),
            DistKind::Uniform { min, max } => write!(f, "Uniform:  min={min},max={max}"),
            DistKind::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => {
                write!(
                    f,
                    "Gaussian:  min={min},max={max},mean={mean:.6},stdev={stdev:.6}"
                )
            }
            DistKind::Exp { min, max, mean } => {
                write!(f, "Exponential:  min={min},max={max},mean={mean:.6}")
            }
            DistKind::Extreme {
                min,
                max,
                shape,
                scale,
            } => {
                write!(
                    f,
                    "Extreme:  min={min},max={max},shape={shape:.6},scale={scale:.6}"
                )
            }
            DistKind::Seq { min, max } => write!(f, "Sequence:  min={min},max={max}"),
        }
    }
}

/// A seeded sampler for one [`DistSpec`].
#[derive(Debug, Clone)]
pub struct Sampler {
    spec: DistSpec,
    rng: JavaRandom,
    /// The position of a `SEQ` distribution.
    position: u64,
}

impl Sampler {
    pub fn new(spec: DistSpec, seed: i64) -> Sampler {
        Sampler {
            spec,
            rng: JavaRandom::new(seed),
            position: seed as u64,
        }
    }

    pub fn set_seed(&mut self, seed: i64) {
        self.rng.set_seed(seed);
        self.position = seed as u64;
    }

    pub fn next(&mut self) -> i64 {
        let v = self.next_plain();
        if self.spec.inverted {
            self.spec.max() - (v - self.spec.min())
        } else {
            v
        }
    }

    fn next_plain(&mut self) -> i64 {
        match self.spec.kind {
            DistKind::Fixed(v) => v,
            DistKind::Uniform { min, max } => {
                let u = self.rng.next_double();
                bound(min, max, u * (max as f64 + 1.0) + (1.0 - u) * min as f64)
            }
            DistKind::Gaussian {
                min,
                max,
                mean,
                stdev,
            } => bound(min, max, stdev * self.rng.next_gaussian() + mean),
            DistKind::Exp { min, max, mean } => {
                let x = -mean * (1.0 - self.rng.next_double()).ln();
                offset(min, max, x)
            }
            DistKind::Extreme {
                min,
                max,
                shape,
                scale,
            } => {
                let x = scale * (-(1.0 - self.rng.next_double()).ln()).powf(1.0 / shape);
                offset(min, max, x)
            }
            DistKind::Seq { min, max } => {
                let range = (max - min) as u64 + 1;
                let v = min + (self.position % range) as i64;
                self.position = self.position.wrapping_add(1);
                v
            }
        }
    }
}

/// cassandra-stress's `print dist=…`: the value below which each share of samples falls.
pub fn describe(spec: &DistSpec) -> String {
    let mut sampler = Sampler::new(spec.clone(), 0x5EED);
    let mut xs: Vec<i64> = (0..100_000).map(|_| sampler.next()).collect();
    xs.sort_unstable();
    let range_max = xs[xs.len() - 1] as f64 / 100.0;
    let mut out = String::from("% of samples    Range       % of total\n");
    for share in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0] {
        let v = xs[((share * xs.len() as f64) as usize).min(xs.len() - 1)];
        out.push_str(&format!(
            "{:<16.1}{:<12}{:>12.1}\n",
            share * 100.0,
            v,
            v as f64 / range_max
        ));
    }
    out
}

/// `DistributionBoundApache.bound`: truncate toward zero, clamp to [min, max].
fn bound(min: i64, max: i64, v: f64) -> i64 {
    (v as i64).clamp(min, max)
}

/// `DistributionOffsetApache`: min plus the draw, clamped to the range.
fn offset(min: i64, max: i64, v: f64) -> i64 {
    min + (v as i64).clamp(0, max - min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(spec: &str, n: usize) -> (f64, f64, i64, i64) {
        let mut s = Sampler::new(DistSpec::parse(spec).expect("parse"), 12345);
        let xs: Vec<i64> = (0..n).map(|_| s.next()).collect();
        let mean = xs.iter().sum::<i64>() as f64 / n as f64;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        (
            mean,
            var.sqrt(),
            *xs.iter().min().unwrap_or(&0),
            *xs.iter().max().unwrap_or(&0),
        )
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(DistSpec::parse("FIXED(34)"), Ok(DistSpec::fixed(34)));
        assert_eq!(
            DistSpec::parse("uniform(1..1M)"),
            Ok(DistSpec::uniform(1, 1_000_000))
        );
        assert_eq!(
            DistSpec::parse("gaussian(1..10000)"),
            Ok(DistSpec::gaussian(1, 10000))
        );
        let g = DistSpec::parse("gauss(0..100,5)").expect("gauss");
        assert_eq!(
            g.kind,
            DistKind::Gaussian {
                min: 0,
                max: 100,
                mean: 50.0,
                stdev: 10.0
            }
        );
        let g = DistSpec::parse("normal(0..100,20,4)").expect("normal");
        assert_eq!(
            g.kind,
            DistKind::Gaussian {
                min: 0,
                max: 100,
                mean: 20.0,
                stdev: 4.0
            }
        );
        assert!(DistSpec::parse("~exp(1..10)").expect("exp").inverted);
        assert!(matches!(
            DistSpec::parse("extreme(1..1b,1.5)").map(|d| d.kind),
            Ok(DistKind::Extreme {
                max: 1_000_000_000,
                ..
            })
        ));
        assert_eq!(
            DistSpec::parse("seq(1..3)").map(|d| d.kind),
            Ok(DistKind::Seq { min: 1, max: 3 })
        );
        let mut seq = Sampler::new(DistSpec::parse("seq(1..3)").expect("seq"), 0);
        assert_eq!(
            [seq.next(), seq.next(), seq.next(), seq.next()],
            [1, 2, 3, 1]
        );
        assert!(DistSpec::parse("zipf(1..3)").is_err());
        assert!(DistSpec::parse("uniform(1..)").is_err());
        assert!(DistSpec::parse("uniform(5..1)").is_err());
        assert!(DistSpec::parse("fixed").is_err());
        assert!(DistSpec::parse("extreme(1..10)").is_err());
    }

    #[test]
    fn displays_as_cassandra_stress() {
        assert_eq!(DistSpec::fixed(34).to_string(), "Fixed:  key=34");
        assert_eq!(
            DistSpec::uniform(1, 1_000_000).to_string(),
            "Uniform:  min=1,max=1000000"
        );
        assert_eq!(
            DistSpec::gaussian(1, 10000).to_string(),
            "Gaussian:  min=1,max=10000,mean=5000.500000,stdev=1666.500000"
        );
    }

    #[test]
    fn samples_are_sane() {
        let (mean, sd, lo, hi) = stats("uniform(1..1000)", 100_000);
        assert!(
            (mean - 500.5).abs() < 5.0 && (sd - 288.7).abs() < 5.0,
            "{mean} {sd}"
        );
        assert!(lo == 1 && hi == 1000);
        let (mean, sd, lo, hi) = stats("gaussian(1..1000)", 100_000);
        assert!(
            (mean - 500.5).abs() < 3.0 && (sd - 166.5).abs() < 5.0,
            "{mean} {sd}"
        );
        assert!(lo >= 1 && hi <= 1000);
        let (mean, _, lo, hi) = stats("exp(1..1000)", 100_000);
        assert!(lo >= 1 && hi <= 1000 && mean < 400.0, "{mean}");
        let (imean, _, _, _) = stats("~exp(1..1000)", 100_000);
        assert!((imean - (1001.0 - mean)).abs() < 1.0, "{imean}");
        let (mean, _, lo, hi) = stats("extreme(1..1000,1.5)", 100_000);
        assert!(lo >= 1 && hi <= 1000 && mean < 500.0, "{mean}");
        assert_eq!(stats("fixed(7)", 10), (7.0, 0.0, 7, 7));
    }

    #[test]
    fn reseeding_repeats_the_draws() {
        let mut s = Sampler::new(DistSpec::uniform(1, 100_000_000_000), 0);
        s.set_seed(77);
        let a = (s.next(), s.next());
        s.set_seed(77);
        assert_eq!(a, (s.next(), s.next()));
    }
}
