//! PyO3 bindings: the `crdkit._placer` extension module.
//!
//! The binding layer converts types and errors, nothing more. Every entry point runs its Rust
//! work under `catch_unwind`, so a bug surfaces as a `RuntimeError` with context instead of a
//! `PanicException` that callers cannot reasonably handle.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use crate::quantity::{self, QuantityError};

/// Runs `work`, turning a panic into a `RuntimeError` that says where it happened.
pub(crate) fn guarded<T>(context: &str, work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            Err(PyRuntimeError::new_err(format!("internal error in {context}: {detail}")))
        }
    }
}

fn quantity_error(err: QuantityError) -> PyErr {
    PyValueError::new_err(err.to_string())
}

/// Parses a Kubernetes quantity (a string, an int or a float) into exact integer milli-units.
#[pyfunction]
#[pyo3(signature = (value, *, allow_negative = false))]
fn parse_quantity(value: &Bound<'_, PyAny>, allow_negative: bool) -> PyResult<i64> {
    guarded("parse_quantity", || {
        if value.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!(
                "invalid quantity {}: expected a string or a number",
                value.repr()?
            )));
        }
        if let Ok(text) = value.cast::<PyString>() {
            return quantity::parse_milli(&text.to_cow()?, allow_negative).map_err(quantity_error);
        }
        if value.is_instance_of::<PyInt>() {
            return match value.extract::<i128>() {
                Ok(int) => quantity::milli_from_integer(int, allow_negative).map_err(quantity_error),
                Err(_) => Err(quantity_error(QuantityError::OutOfRange(value.str()?.to_cow()?.into_owned()))),
            };
        }
        if let Ok(float) = value.cast::<PyFloat>() {
            return quantity::milli_from_float(float.value(), allow_negative).map_err(quantity_error);
        }
        Err(PyTypeError::new_err(format!(
            "invalid quantity {}: expected a string or a number",
            value.repr()?
        )))
    })
}

/// The `crdkit._placer` module.
#[pymodule]
fn _placer(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add("MAX_SIGNIFICANT_DIGITS", quantity::MAX_SIGNIFICANT_DIGITS)?;
    Ok(())
}
