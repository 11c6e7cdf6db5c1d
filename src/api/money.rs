//! Money as LiteLLM budgets use it: USD amounts kept as decimal strings in
//! the API (`"25.50"`) and compared numerically in micro-dollars, so neither
//! `25.5` vs `25.50` nor float round-trips count as drift.

use std::fmt;

/// An amount in millionths of a dollar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(u64);

/// Decimal places kept: LiteLLM spends are fractions of a cent.
const SCALE: u32 = 6;
const ONE: u64 = 10u64.pow(SCALE);

/// Why a string is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "must be a non-negative decimal amount such as \"25.50\" (at most 6 decimal places), got {0:?}"
)]
pub struct MoneyError(pub String);

impl Money {
    /// Parses `"25"`, `"25.5"`, `"0.000001"`.
    pub fn parse(text: &str) -> Result<Money, MoneyError> {
        let err = || MoneyError(text.to_string());
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole)
            || (text.contains('.') && !digits(fraction))
            || fraction.len() > SCALE as usize
        {
            return Err(err());
        }
        let whole: u64 = whole.parse().map_err(|_| err())?;
        let mut micros: u64 = 0;
        for (i, b) in fraction.bytes().enumerate() {
            micros += u64::from(b - b'0') * 10u64.pow(SCALE - 1 - i as u32);
        }
        whole
            .checked_mul(ONE)
            .and_then(|w| w.checked_add(micros))
            .map(Money)
            .ok_or_else(err)
    }

    /// Converts a float from the LiteLLM wire, rounding to micro-dollars.
    /// Negative and non-finite values are not amounts.
    pub fn from_f64(value: f64) -> Option<Money> {
        (value.is_finite() && value >= 0.0 && value < (u64::MAX / ONE) as f64)
            .then(|| Money((value * ONE as f64).round() as u64))
    }

    /// The amount as a float, for the LiteLLM wire.
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / ONE as f64
    }
}

/// Shortest decimal form: `25.5`, `100`, `0.000001`.
impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, fraction) = (self.0 / ONE, self.0 % ONE);
        if fraction == 0 {
            return write!(f, "{whole}");
        }
        let fraction = format!("{fraction:06}");
        write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_amounts_compare_equal_whatever_their_spelling() {
        assert_eq!(
            Money::parse("25.5").unwrap(),
            Money::parse("25.50").unwrap()
        );
        assert!(Money::parse("100").unwrap() > Money::parse("99.999999").unwrap());
    }

    #[test]
    fn rejects_what_is_not_a_plain_amount() {
        for bad in ["", "-1", "1.", ".5", "1e3", "12x", "0.0000001", "1,5", " 1"] {
            assert!(Money::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    /// Every amount up to the largest `MONEY_PATTERN` admits comes back
    /// from the float wire (and the shortest JSON spelling of the float,
    /// which LiteLLM parses back) as the same amount, so none is drift
    /// forever. The API server test (`tests/integration/provider_bounds.rs`) shows the
    /// pattern admits this largest amount and refuses the next dollar.
    #[test]
    fn every_amount_the_crds_admit_survives_the_float_wire() {
        let round_trip = |m: Money| {
            let json = serde_json::to_string(&m.as_f64()).unwrap();
            Money::from_f64(serde_json::from_str(&json).unwrap())
        };
        let max = Money::parse("999999999.999999").unwrap();
        // The edges and a spread of the amounts in between.
        let mut micros: u64 = 1;
        while micros <= max.0 {
            for m in [
                micros,
                micros - 1,
                max.0 - micros + 1,
                micros.wrapping_mul(7_919) % max.0,
            ] {
                assert_eq!(round_trip(Money(m)), Some(Money(m)), "{}", Money(m));
            }
            micros = micros * 3 + 1;
        }
        // What the pattern admitted before (twelve digits) does not survive.
        let too_precise = Money::parse("999999999999.999999").unwrap();
        assert_ne!(round_trip(too_precise), Some(too_precise));
    }

    #[test]
    fn float_round_trip_has_no_drift() {
        let m = Money::from_f64(0.1 + 0.2).unwrap();
        assert_eq!(m, Money::parse("0.3").unwrap());
        assert_eq!(m.to_string(), "0.3");
        assert_eq!(Money::from_f64(-1.0), None);
        assert_eq!(Money::parse("25.50").unwrap().to_string(), "25.5");
    }
}
