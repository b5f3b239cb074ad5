//! Floating-point helpers shared by the f32 and f64 built-ins.
