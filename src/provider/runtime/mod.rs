//! The process: the controllers of every kind ([`controllers`]), leader
//! election ([`leader`]), health and the HTTP server ([`health`],
//! [`http`]), the cluster id, memory and threads.
//!
//! It may use every other part of the provider; nothing imports it.

pub mod cluster_id;
pub mod controllers;
pub mod health;
pub mod http;
pub mod leader;
pub mod memory;
pub mod threads;
