//! `function-litellm`: serves the composition function (the default), or
//! renders files offline (`function-litellm render XR COMPOSITION`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use litellm_crossplane::function::render::{self, RenderFiles};
use litellm_crossplane::function::server;

/// A request allocates and frees thousands of small objects (decoded
/// statuses, desired objects); glibc's malloc spent a third of the CPU on
/// them (docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "function-litellm",
    version,
    about = "Crossplane composition function for LiteLLM teams, keys, budgets and models"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: function_sdk_rust::Args,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the function offline and print the desired resources as YAML.
    Render {
        /// The XR, YAML.
        xr: PathBuf,
        /// A Composition whose pipeline calls this function, or its Input.
        composition: PathBuf,
        /// Observed composed resources (YAML documents annotated with
        /// crossplane.io/composition-resource-name).
        #[arg(long)]
        observed_resources: Option<PathBuf>,
        /// The referenced LiteLLMInstance, as Crossplane would supply it.
        #[arg(long)]
        required_resources: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // One crypto provider for rustls, installed before anything builds a TLS config.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Render {
            xr,
            composition,
            observed_resources,
            required_resources,
        }) => {
            let files = RenderFiles {
                xr,
                composition,
                observed: observed_resources,
                required: required_resources,
            };
            match render::render(&files) {
                Ok(rendered) => {
                    for warning in &rendered.warnings {
                        eprintln!("function-litellm render: warning: {warning}");
                    }
                    print!("{}", render::to_yaml(&rendered.documents));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("function-litellm render: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        None => {
            function_sdk_rust::logging::configure(cli.serve.debug);
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("cannot start the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(server::serve(&cli.serve, shutdown_signal())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    tracing::error!(error = %e, "function-litellm stopped");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

/// SIGTERM (what Kubernetes sends) or Ctrl-C.
async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot listen for SIGTERM; stopping on Ctrl-C only");
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    tracing::info!("shutting down");
}
