//! Problems with a request: what is wrong, and where.

use std::fmt;

/// One problem with the XR or the input, naming the field path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Path of the offending field, such as `spec.keys[1].maxBudget`.
    pub field: String,
    /// What is wrong with it, or which rule it breaks.
    pub message: String,
}

impl Problem {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}
