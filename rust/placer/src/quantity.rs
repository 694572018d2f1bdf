//! Kubernetes resource quantities as exact integer milli-units.
//!
//! The placer compares capacities with integer arithmetic only, so every quantity is turned into
//! thousandths of its unit once, at the boundary. Values below a milli-unit round up, as
//! Kubernetes' `MilliValue` does, so a request is never understated.

use std::fmt;

/// At most this many significant digits are accepted; it keeps the mantissa inside `u128`.
pub const MAX_SIGNIFICANT_DIGITS: usize = 38;

/// Why a quantity was refused. The message always names the offending input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// The text does not follow the Kubernetes quantity grammar.
    Malformed(String),
    /// A negative value where only non-negative values make sense.
    Negative(String),
    /// The value does not fit in a signed 64-bit count of milli-units.
    OutOfRange(String),
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(s) => write!(f, "invalid quantity {s:?}: not a Kubernetes quantity"),
            Self::Negative(s) => write!(f, "invalid quantity {s:?}: must not be negative"),
            Self::OutOfRange(s) => write!(f, "invalid quantity {s:?}: out of range"),
        }
    }
}

impl std::error::Error for QuantityError {}

/// The scale a suffix applies: a power of ten or a power of two.
#[derive(Clone, Copy)]
enum Scale {
    Decimal(i64),
    Binary(u32),
}

fn parse_suffix(suffix: &str) -> Option<Scale> {
    let scale = match suffix {
        "" => Scale::Decimal(0),
        "n" => Scale::Decimal(-9),
        "u" => Scale::Decimal(-6),
        "m" => Scale::Decimal(-3),
        "k" => Scale::Decimal(3),
        "M" => Scale::Decimal(6),
        "G" => Scale::Decimal(9),
        "T" => Scale::Decimal(12),
        "P" => Scale::Decimal(15),
        "E" => Scale::Decimal(18),
        "Ki" => Scale::Binary(10),
        "Mi" => Scale::Binary(20),
        "Gi" => Scale::Binary(30),
        "Ti" => Scale::Binary(40),
        "Pi" => Scale::Binary(50),
        "Ei" => Scale::Binary(60),
        _ => return parse_exponent(suffix),
    };
    Some(scale)
}

/// `e3`, `E-2`, `e+10`: a decimal exponent. Exponents far outside any useful range are clamped;
/// the range check on the result still rejects them or rounds them to one milli-unit.
fn parse_exponent(suffix: &str) -> Option<Scale> {
    let rest = suffix.strip_prefix(['e', 'E'])?;
    let (negative, digits) = match rest.as_bytes().first()? {
        b'+' => (false, &rest[1..]),
        b'-' => (true, &rest[1..]),
        _ => (false, rest),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.parse::<i64>().unwrap_or(i64::MAX).min(1_000_000);
    Some(Scale::Decimal(if negative {
        -magnitude
    } else {
        magnitude
    }))
}

/// `ceil(num / den)` where `None` stands for a value too large for `u128`.
fn ceil_div(num: Option<u128>, den: Option<u128>) -> Option<u128> {
    let num = num?;
    match den {
        None => Some(u128::from(num > 0)),
        Some(den) => Some(num / den + u128::from(num % den != 0)),
    }
}

fn pow_checked(base: u128, exp: u64) -> Option<u128> {
    u32::try_from(exp).ok().and_then(|e| base.checked_pow(e))
}

/// Parses a quantity string into milli-units, rounding fractions of a milli-unit up
/// (away from zero for negative values).
pub fn parse_milli(text: &str, allow_negative: bool) -> Result<i64, QuantityError> {
    let malformed = || QuantityError::Malformed(text.to_owned());
    let (negative, body) = match text.as_bytes().first() {
        Some(b'+') => (false, &text[1..]),
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    let number_len = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    let (number, suffix) = body.split_at(number_len);
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) if !f.contains('.') => (i, f),
        Some(_) => return Err(malformed()),
        None => (number, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(malformed());
    }
    let scale = parse_suffix(suffix).ok_or_else(malformed)?;

    // Significant digits only: leading zeros of the whole number, trailing zeros of the fraction.
    let frac_trimmed = frac_part.trim_end_matches('0');
    let digits: String = format!("{int_part}{frac_trimmed}");
    let significant = digits.trim_start_matches('0');
    if significant.len() > MAX_SIGNIFICANT_DIGITS {
        return Err(QuantityError::OutOfRange(text.to_owned()));
    }
    let mantissa: u128 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| malformed())?
    };
    if mantissa == 0 {
        return Ok(0);
    }
    let frac_digits = i64::try_from(frac_trimmed.len()).map_err(|_| malformed())?;

    // value * 1000 = mantissa * scale * 10^3 / 10^frac_digits
    let milli = match scale {
        Scale::Decimal(exp) => {
            let shift = exp + 3 - frac_digits;
            if shift >= 0 {
                ceil_div(
                    pow_checked(10, shift.unsigned_abs()).and_then(|p| mantissa.checked_mul(p)),
                    Some(1),
                )
            } else {
                ceil_div(Some(mantissa), pow_checked(10, shift.unsigned_abs()))
            }
        }
        Scale::Binary(bits) => {
            // 10^g = 2^g * 5^g, so mantissa * 2^bits / 10^g = mantissa * 2^(bits-g) / 5^g.
            let g = frac_digits - 3;
            if g <= 0 {
                let num = pow_checked(10, g.unsigned_abs())
                    .and_then(|p| mantissa.checked_mul(p))
                    .and_then(|m| m.checked_mul(1u128 << bits));
                ceil_div(num, Some(1))
            } else {
                let five = pow_checked(5, g.unsigned_abs());
                let bits = i64::from(bits);
                if bits >= g {
                    let num = mantissa.checked_mul(1u128 << (bits - g));
                    ceil_div(num, five)
                } else {
                    let den = five.and_then(|f| {
                        pow_checked(2, (g - bits).unsigned_abs()).and_then(|p| f.checked_mul(p))
                    });
                    ceil_div(Some(mantissa), den)
                }
            }
        }
    };
    let milli = milli
        .and_then(|m| i64::try_from(m).ok())
        .ok_or_else(|| QuantityError::OutOfRange(text.to_owned()))?;
    if negative && milli != 0 {
        if !allow_negative {
            return Err(QuantityError::Negative(text.to_owned()));
        }
        return Ok(-milli);
    }
    Ok(milli)
}

/// Milli-units for a whole number of units, as JSON integers in the contract are.
pub fn milli_from_integer(value: i128, allow_negative: bool) -> Result<i64, QuantityError> {
    if value < 0 && !allow_negative {
        return Err(QuantityError::Negative(value.to_string()));
    }
    value
        .checked_mul(1000)
        .and_then(|m| i64::try_from(m).ok())
        .ok_or_else(|| QuantityError::OutOfRange(value.to_string()))
}

/// The shortest decimal text that reads back as `value`. When the value lies exactly halfway
/// between two shortest candidates, the one with the even last digit wins, as in Python's
/// `repr`, so the Rust and pure-Python parsers read a float as the same digits (Rust's own
/// formatting rounds such ties up).
fn shortest_text(value: f64) -> String {
    let text = format!("{value:e}");
    let Some((mantissa, exponent)) = text.split_once('e') else {
        return text;
    };
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    let Some(&last) = digits.last() else {
        return text;
    };
    if (last - b'0') % 2 == 0 {
        return text;
    }
    // The exact binary value to many more digits: a tie shows as a 5 followed only by zeros.
    let precise = format!("{:.*e}", digits.len() + 29, value.abs());
    let precise_digits: Vec<u8> = precise
        .split_once('e')
        .map_or(&b""[..], |(m, _)| m.as_bytes())
        .iter()
        .copied()
        .filter(u8::is_ascii_digit)
        .collect();
    let tail = precise_digits.get(digits.len()..).unwrap_or(&[]);
    let tie = tail.first() == Some(&b'5') && tail[1..].iter().all(|&b| b == b'0');
    let mut lower = digits.clone();
    if let Some(end) = lower.last_mut() {
        *end -= 1;
    }
    if !tie || precise_digits.get(..digits.len()) != Some(&lower[..]) {
        return text;
    }
    let lower = String::from_utf8(lower).unwrap_or_default();
    let candidate = if lower.len() > 1 {
        format!("{sign}{}.{}e{exponent}", &lower[..1], &lower[1..])
    } else {
        format!("{sign}{lower}e{exponent}")
    };
    if candidate.parse::<f64>() == Ok(value) {
        candidate
    } else {
        text
    }
}

/// Milli-units for a JSON floating-point number, read through its shortest decimal form so that
/// `0.1` means exactly one tenth.
pub fn milli_from_float(value: f64, allow_negative: bool) -> Result<i64, QuantityError> {
    if !value.is_finite() {
        return Err(QuantityError::Malformed(value.to_string()));
    }
    let text = shortest_text(value);
    parse_milli(&text, allow_negative).map_err(|err| match err {
        QuantityError::Malformed(_) => QuantityError::Malformed(value.to_string()),
        QuantityError::Negative(_) => QuantityError::Negative(value.to_string()),
        QuantityError::OutOfRange(_) => QuantityError::OutOfRange(value.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn milli(s: &str) -> i64 {
        parse_milli(s, false).unwrap()
    }

    #[test]
    fn decimal_and_binary_suffixes() {
        assert_eq!(milli("500m"), 500);
        assert_eq!(milli("1.5"), 1500);
        assert_eq!(milli("64Gi"), 64 * (1 << 30) * 1000);
        assert_eq!(milli("1e3"), 1_000_000);
        assert_eq!(milli("1E3"), 1_000_000);
        assert_eq!(milli("2k"), 2_000_000);
        assert_eq!(milli("1M"), 1_000_000_000);
        assert_eq!(milli("1P"), 1_000_000_000_000_000_000);
        assert_eq!(
            parse_milli("1E", false),
            Err(QuantityError::OutOfRange("1E".into()))
        );
        assert_eq!(milli("1536Gi"), 1536 * (1 << 30) * 1000);
        assert_eq!(milli("0.5Ki"), 512_000);
        assert_eq!(milli("+8"), 8000);
        assert_eq!(milli(".5"), 500);
        assert_eq!(milli("5."), 5000);
        assert_eq!(milli("0"), 0);
        assert_eq!(milli("-0"), 0);
        assert_eq!(milli("1e-3"), 1);
        assert_eq!(milli("0e999999"), 0);
    }

    #[test]
    fn fractions_of_a_milli_round_up() {
        assert_eq!(milli("1n"), 1);
        assert_eq!(milli("1500u"), 2);
        assert_eq!(milli("0.0001"), 1);
        assert_eq!(milli("0.001Ki"), 1024);
        assert_eq!(milli("0.0000001Ki"), 1);
        assert_eq!(milli("1e-400"), 1);
        assert_eq!(parse_milli("-1n", true), Ok(-1));
    }

    #[test]
    fn malformed_inputs_are_refused() {
        for bad in [
            "", "abc", "1.2.3", "1 ", " 1", "1x", "Gi", ".", "-", "1e", "1e+", "1Kib", "1ki", "--1",
        ] {
            assert_eq!(
                parse_milli(bad, false),
                Err(QuantityError::Malformed(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn float_ties_between_shortest_forms_go_to_the_even_digit() {
        // 2^49 + 0.25 is exactly halfway between ...312.2 and ...312.3; Python's repr says .2.
        assert_eq!(
            milli_from_float(2f64.powi(49) + 0.25, false),
            Ok(562_949_953_421_312_200)
        );
        assert_eq!(
            milli_from_float(2f64.powi(49) + 0.75, false),
            Ok(562_949_953_421_312_800)
        );
        assert_eq!(
            milli_from_float(-(2f64.powi(49) + 0.25), true),
            Ok(-562_949_953_421_312_200)
        );
        assert_eq!(milli_from_float(0.1, false), Ok(100));
        assert_eq!(milli_from_float(1.5, false), Ok(1500));
    }

    #[test]
    fn negative_values_need_permission() {
        assert_eq!(
            parse_milli("-1", false),
            Err(QuantityError::Negative("-1".into()))
        );
        assert_eq!(parse_milli("-1.5", true), Ok(-1500));
    }

    #[test]
    fn overflow_is_an_error_naming_the_input() {
        let err = parse_milli("10Ei", false).unwrap_err();
        assert_eq!(err, QuantityError::OutOfRange("10Ei".into()));
        assert!(err.to_string().contains("\"10Ei\""));
        assert!(parse_milli("1e400", false).is_err());
        assert!(parse_milli(&"9".repeat(39), false).is_err());
        assert_eq!(milli("9223372036854775.807"), i64::MAX);
        assert!(parse_milli("9223372036854775.808", false).is_err());
    }

    #[test]
    fn numbers_from_json() {
        assert_eq!(milli_from_integer(8, false), Ok(8000));
        assert!(milli_from_integer(-8, false).is_err());
        assert!(milli_from_integer(i128::from(i64::MAX), false).is_err());
        assert_eq!(milli_from_float(0.1, false), Ok(100));
        assert_eq!(milli_from_float(1.5e3, false), Ok(1_500_000));
        assert_eq!(milli_from_float(1e-7, false), Ok(1));
        assert!(milli_from_float(f64::NAN, false).is_err());
        assert!(milli_from_float(-0.5, false).is_err());
    }
}
