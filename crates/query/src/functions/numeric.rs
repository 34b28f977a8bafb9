//! Numbers with Java's semantics: conversions between CQL's numeric types as `Number`'s
//! `intValue()`/`longValue()`/… do them (integers wrap, floating point saturates), arithmetic
//! in a result type (integers wrap like Java's, varint and decimal are exact, decimal division
//! rounds to 34 digits as `MathContext.DECIMAL128`), and Java's division-by-zero messages.
use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};
use types::{NativeType, Value};

use super::Operator;

/// A decimal: `unscaled × 10^-scale`.
#[derive(Clone, Debug, PartialEq)]
pub struct Decimal {
    pub unscaled: BigInt,
    pub scale: i32,
}

/// A number of one of CQL's numeric types (counter values are longs).
#[derive(Clone, Debug, PartialEq)]
pub enum Num {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    Big(BigInt),
    Dec(Decimal),
}

/// Whether `n` is one of the numeric types arithmetic and aggregates take.
pub fn is_numeric(n: NativeType) -> bool {
    use NativeType as N;
    matches!(
        n,
        N::Tinyint
            | N::Smallint
            | N::Int
            | N::Bigint
            | N::Counter
            | N::Float
            | N::Double
            | N::Varint
            | N::Decimal
    )
}

/// CQL's numeric types in the order Cassandra registers their overloads.
pub const NUMERIC: [NativeType; 9] = [
    NativeType::Tinyint,
    NativeType::Smallint,
    NativeType::Int,
    NativeType::Bigint,
    NativeType::Float,
    NativeType::Double,
    NativeType::Decimal,
    NativeType::Varint,
    NativeType::Counter,
];

fn pow10(n: u32) -> BigInt {
    BigInt::from(10u32).pow(n)
}

impl Decimal {
    pub fn new(unscaled: BigInt, scale: i32) -> Decimal {
        Decimal { unscaled, scale }
    }

    fn rescaled(&self, scale: i32) -> BigInt {
        let up = scale.saturating_sub(self.scale).max(0) as u32;
        &self.unscaled * pow10(up)
    }

    fn aligned(a: &Decimal, b: &Decimal) -> (BigInt, BigInt, i32) {
        let scale = a.scale.max(b.scale);
        (a.rescaled(scale), b.rescaled(scale), scale)
    }

    pub fn add(&self, other: &Decimal) -> Decimal {
        let (a, b, scale) = Decimal::aligned(self, other);
        Decimal::new(a + b, scale)
    }

    pub fn sub(&self, other: &Decimal) -> Decimal {
        let (a, b, scale) = Decimal::aligned(self, other);
        Decimal::new(a - b, scale)
    }

    pub fn mul(&self, other: &Decimal) -> Decimal {
        Decimal::new(
            &self.unscaled * &other.unscaled,
            self.scale.saturating_add(other.scale),
        )
    }

    /// Java's `remainder`: the sign of the dividend.
    pub fn rem(&self, other: &Decimal) -> Option<Decimal> {
        let (a, b, scale) = Decimal::aligned(self, other);
        (!b.is_zero()).then(|| Decimal::new(a % b, scale))
    }

    /// Cassandra's `DecimalType.divide`: the quotient at a scale that keeps 32 significant
    /// digits (at least 32 and either operand's scale, at most 1000), rounded half up, then
    /// trailing zeros stripped (`None` for a zero divisor).
    pub fn div(&self, other: &Decimal) -> Option<Decimal> {
        if other.unscaled.is_zero() {
            return None;
        }
        let first_digit = (self.precision() - self.scale) - (other.precision() - other.scale);
        let scale = (32 - first_digit)
            .max(self.scale)
            .max(other.scale)
            .clamp(32, 1000);
        let shift = i64::from(scale) - i64::from(self.scale) + i64::from(other.scale);
        let (mut num, mut den) = (self.unscaled.clone(), other.unscaled.clone());
        if shift >= 0 {
            num *= pow10(shift as u32);
        } else {
            den *= pow10(shift.unsigned_abs() as u32);
        }
        if den.sign() == Sign::Minus {
            num = -num;
            den = -den;
        }
        let (q, r) = (&num / &den, &num % &den);
        Some(Decimal::new(round_half(q, &r, &den, false), scale).stripped())
    }

    /// The number of decimal digits of the unscaled value (1 for zero).
    fn precision(&self) -> i32 {
        self.unscaled.magnitude().to_string().len() as i32
    }

    /// Java's `stripTrailingZeros`: zero is `0` at scale 0.
    fn stripped(mut self) -> Decimal {
        if self.unscaled.is_zero() {
            return Decimal::new(BigInt::zero(), 0);
        }
        while (&self.unscaled % 10u32).is_zero() {
            self.unscaled /= 10u32;
            self.scale -= 1;
        }
        self
    }

    /// The quotient by `n` at this decimal's scale, half even (Java's
    /// `divide(BigDecimal.valueOf(n), RoundingMode.HALF_EVEN)`).
    pub fn div_half_even(&self, n: i64) -> Decimal {
        let divisor = BigInt::from(n);
        let (q, r) = (&self.unscaled / &divisor, &self.unscaled % &divisor);
        Decimal::new(round_half(q, &r, &divisor, true), self.scale)
    }

    /// The value rounded to an integer, half up (`setScale(0, HALF_UP)`).
    pub fn round_half_up(&self) -> Decimal {
        if self.scale <= 0 {
            return self.clone();
        }
        let divisor = pow10(self.scale as u32);
        let (q, r) = (&self.unscaled / &divisor, &self.unscaled % &divisor);
        Decimal::new(round_half(q, &r, &divisor, false), 0)
    }

    /// The integer part (Java's `toBigInteger`).
    pub fn truncated(&self) -> BigInt {
        if self.scale <= 0 {
            return self.rescaled(0);
        }
        &self.unscaled / pow10(self.scale as u32)
    }

    pub fn to_f64(&self) -> f64 {
        types::value::java_decimal_string(&self.unscaled, self.scale)
            .parse()
            .unwrap_or(f64::NAN)
    }

    /// Java's `BigDecimal.valueOf(double)`: the digits of `Double.toString`.
    pub fn from_f64(v: f64) -> Option<Decimal> {
        Decimal::parse(&types::value::java_double_string(v))
    }

    /// Java's `new BigDecimal(text)` (`None` for NaN, infinities and other non-numbers).
    pub fn parse(text: &str) -> Option<Decimal> {
        match types::literal::from_string(NativeType::Decimal, text).ok()? {
            Value::Decimal { unscaled, scale } => Some(Decimal::new(unscaled, scale)),
            _ => None,
        }
    }

    pub fn is_negative(&self) -> bool {
        self.unscaled.sign() == Sign::Minus
    }
}

/// `q` adjusted by the dropped remainder `r` of a positive `divisor`: half even or half up,
/// away from zero as Java's rounding modes round.
fn round_half(q: BigInt, r: &BigInt, divisor: &BigInt, even: bool) -> BigInt {
    let twice = r.magnitude() * 2u32;
    let up = match twice.cmp(divisor.magnitude()) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => !even || (&q % 2u32) != BigInt::zero(),
        std::cmp::Ordering::Less => false,
    };
    let negative = r.sign() == Sign::Minus || (r.is_zero() && q.sign() == Sign::Minus);
    match (up, negative) {
        (false, _) => q,
        (true, true) => q - 1,
        (true, false) => q + 1,
    }
}

impl Num {
    /// The number of a decoded value, if it is one.
    pub fn of(value: &Value) -> Option<Num> {
        Some(match value {
            Value::Tinyint(v) => Num::I8(*v),
            Value::Smallint(v) => Num::I16(*v),
            Value::Int(v) => Num::I32(*v),
            Value::Bigint(v) | Value::Counter(v) => Num::I64(*v),
            Value::Float(v) => Num::F32(*v),
            Value::Double(v) => Num::F64(*v),
            Value::Varint(v) => Num::Big(v.clone()),
            Value::Decimal { unscaled, scale } => Num::Dec(Decimal::new(unscaled.clone(), *scale)),
            _ => return None,
        })
    }

    /// Java's `longValue()`.
    pub fn to_i64(&self) -> i64 {
        match self {
            Num::I8(v) => i64::from(*v),
            Num::I16(v) => i64::from(*v),
            Num::I32(v) => i64::from(*v),
            Num::I64(v) => *v,
            Num::F32(v) => *v as i64,
            Num::F64(v) => *v as i64,
            Num::Big(v) => low_bits(v),
            Num::Dec(d) => low_bits(&d.truncated()),
        }
    }

    /// Java's `intValue()` (floating point saturates to int, everything else wraps).
    fn to_i32(&self) -> i32 {
        match self {
            Num::F32(v) => *v as i32,
            Num::F64(v) => *v as i32,
            other => other.to_i64() as i32,
        }
    }

    /// Java's `doubleValue()`.
    pub fn to_f64(&self) -> f64 {
        match self {
            Num::F32(v) => f64::from(*v),
            Num::F64(v) => *v,
            Num::Big(v) => v.to_f64().unwrap_or(f64::NAN),
            Num::Dec(d) => d.to_f64(),
            other => other.to_i64() as f64,
        }
    }

    fn to_big(&self) -> BigInt {
        match self {
            Num::Big(v) => v.clone(),
            Num::Dec(d) => d.truncated(),
            other => BigInt::from(other.to_i64()),
        }
    }

    /// Cassandra's `DecimalType.toBigDecimal`: decimals and varints as they are, every other
    /// number through `BigDecimal.valueOf(doubleValue())` (so the int 7 is 7.0).
    fn to_decimal(&self) -> Decimal {
        match self {
            Num::Dec(d) => d.clone(),
            Num::Big(v) => Decimal::new(v.clone(), 0),
            other => Decimal::from_f64(other.to_f64()).unwrap_or(Decimal::new(BigInt::zero(), 0)),
        }
    }

    /// The number converted to `target` as Java's `Number` accessors convert.
    pub fn convert(&self, target: NativeType) -> Num {
        use NativeType as N;
        match target {
            N::Tinyint => Num::I8(self.to_i32() as i8),
            N::Smallint => Num::I16(self.to_i32() as i16),
            N::Int => Num::I32(self.to_i32()),
            N::Float => Num::F32(self.to_f64() as f32),
            N::Double => Num::F64(self.to_f64()),
            N::Varint => Num::Big(self.to_big()),
            N::Decimal => Num::Dec(self.to_decimal()),
            _ => Num::I64(self.to_i64()),
        }
    }

    /// The value of type `target` holding this number (converted first).
    pub fn into_value(self, target: NativeType) -> Value {
        match (self.convert(target), target) {
            (Num::I8(v), _) => Value::Tinyint(v),
            (Num::I16(v), _) => Value::Smallint(v),
            (Num::I32(v), _) => Value::Int(v),
            (Num::I64(v), NativeType::Counter) => Value::Counter(v),
            (Num::I64(v), _) => Value::Bigint(v),
            (Num::F32(v), _) => Value::Float(v),
            (Num::F64(v), _) => Value::Double(v),
            (Num::Big(v), _) => Value::Varint(v),
            (Num::Dec(d), _) => Value::Decimal {
                unscaled: d.unscaled,
                scale: d.scale,
            },
        }
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Num::F32(v) => *v < 0.0,
            Num::F64(v) => *v < 0.0,
            Num::Big(v) => v.sign() == Sign::Minus,
            Num::Dec(d) => d.is_negative(),
            other => other.to_i64() < 0,
        }
    }
}

/// The low 64 bits of a big integer, as Java's `longValue()`.
fn low_bits(v: &BigInt) -> i64 {
    let bytes = v.to_signed_bytes_le();
    let fill = if v.sign() == Sign::Minus { 0xff } else { 0 };
    let mut buf = [fill; 8];
    for (b, src) in buf.iter_mut().zip(bytes.iter()) {
        *b = *src;
    }
    i64::from_le_bytes(buf)
}

/// `a op b` computed in `target` (both converted to it first); the error is Java's message.
pub fn arithmetic(op: Operator, target: NativeType, a: &Num, b: &Num) -> Result<Num, String> {
    let (a, b) = (a.convert(target), b.convert(target));
    let by_zero = || "/ by zero".to_string();
    let big_zero = || "BigInteger divide by zero".to_string();
    macro_rules! ints {
        ($x:expr, $y:expr, $wrap:path) => {
            match op {
                Operator::Add => Ok($wrap($x.wrapping_add($y))),
                Operator::Sub => Ok($wrap($x.wrapping_sub($y))),
                Operator::Mul => Ok($wrap($x.wrapping_mul($y))),
                Operator::Div if $y == 0 => Err(by_zero()),
                Operator::Div => Ok($wrap($x.wrapping_div($y))),
                Operator::Mod if $y == 0 => Err(by_zero()),
                Operator::Mod => Ok($wrap($x.wrapping_rem($y))),
            }
        };
    }
    macro_rules! floats {
        ($x:expr, $y:expr, $wrap:path) => {
            Ok($wrap(match op {
                Operator::Add => $x + $y,
                Operator::Sub => $x - $y,
                Operator::Mul => $x * $y,
                Operator::Div => $x / $y,
                Operator::Mod => $x % $y,
            }))
        };
    }
    match (a, b) {
        (Num::I8(x), Num::I8(y)) => ints!(x, y, Num::I8),
        (Num::I16(x), Num::I16(y)) => ints!(x, y, Num::I16),
        (Num::I32(x), Num::I32(y)) => ints!(x, y, Num::I32),
        (Num::I64(x), Num::I64(y)) => ints!(x, y, Num::I64),
        (Num::F32(x), Num::F32(y)) => floats!(x, y, Num::F32),
        (Num::F64(x), Num::F64(y)) => floats!(x, y, Num::F64),
        (Num::Big(x), Num::Big(y)) => match op {
            Operator::Add => Ok(Num::Big(x + y)),
            Operator::Sub => Ok(Num::Big(x - y)),
            Operator::Mul => Ok(Num::Big(x * y)),
            _ if y.is_zero() => Err(big_zero()),
            Operator::Div => Ok(Num::Big(x / y)),
            Operator::Mod => Ok(Num::Big(x % y)),
        },
        (Num::Dec(x), Num::Dec(y)) => match op {
            Operator::Add => Ok(Num::Dec(x.add(&y))),
            Operator::Sub => Ok(Num::Dec(x.sub(&y))),
            Operator::Mul => Ok(Num::Dec(x.mul(&y))),
            Operator::Div => x.div(&y).map(Num::Dec).ok_or_else(big_zero),
            // Java's BigDecimal.remainder words it so (its divide is BigInteger's above).
            Operator::Mod if x.unscaled.is_zero() => x
                .rem(&y)
                .map(Num::Dec)
                .ok_or_else(|| "Division undefined".into()),
            Operator::Mod => x
                .rem(&y)
                .map(Num::Dec)
                .ok_or_else(|| "Division by zero".into()),
        },
        _ => Err("mismatched operand types".into()),
    }
}

/// Java's `-x` in the number's own type (integers wrap).
pub fn negate(n: &Num) -> Num {
    match n {
        Num::I8(v) => Num::I8(v.wrapping_neg()),
        Num::I16(v) => Num::I16(v.wrapping_neg()),
        Num::I32(v) => Num::I32(v.wrapping_neg()),
        Num::I64(v) => Num::I64(v.wrapping_neg()),
        Num::F32(v) => Num::F32(-v),
        Num::F64(v) => Num::F64(-v),
        Num::Big(v) => Num::Big(-v),
        Num::Dec(d) => Num::Dec(Decimal::new(-&d.unscaled, d.scale)),
    }
}

/// The type of `left op right` (Cassandra's `OperationFcts.returnType`): floating point when
/// either is, of the larger size (varint and decimal are unbounded; counter counts as bigint).
pub fn result_type(left: NativeType, right: NativeType) -> NativeType {
    use NativeType as N;
    let size = |n: NativeType| match n {
        N::Tinyint => 1,
        N::Smallint => 2,
        N::Int | N::Float => 4,
        N::Bigint | N::Counter | N::Double => 8,
        _ => usize::MAX,
    };
    let floating = |n: NativeType| matches!(n, N::Float | N::Double | N::Decimal);
    let size = size(left).max(size(right));
    match (floating(left) || floating(right), size) {
        (true, 4) => N::Float,
        (true, 8) => N::Double,
        (true, _) => N::Decimal,
        (false, 1) => N::Tinyint,
        (false, 2) => N::Smallint,
        (false, 4) => N::Int,
        (false, 8) => N::Bigint,
        (false, _) => N::Varint,
    }
}
