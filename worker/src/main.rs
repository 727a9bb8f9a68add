//! `connect-worker <worker.properties>`: starts one distributed worker.
//!
//! It parses the arguments, sets up logging, reads the worker config and runs
//! [`connect_worker::app::start`] until SIGTERM or Ctrl-C.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use tokio_util::sync::CancellationToken;

use connect_worker::config::WorkerConfig;
use connect_worker::logging::LogLevels;

/// A Kafka Connect-compatible distributed worker.
#[derive(Debug, Parser)]
#[command(version, about, args_conflicts_with_subcommands = true)]
struct Cli {
    /// Worker config in Java .properties format (the keys of connect-distributed.properties).
    worker_properties: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Check a topic written by the verifiable source: read it with read_committed and require
    /// every seqno of every task exactly once, no gap. Exits 0 only when exact.
    Verify {
        #[arg(long)]
        bootstrap_servers: String,
        /// A properties file of Java client keys (security.protocol, sasl.*, ssl.*...).
        #[arg(long)]
        command_config: Option<PathBuf>,
        #[arg(long)]
        topic: String,
        /// The number of tasks expected.
        #[arg(long)]
        tasks: Option<usize>,
        /// How long reading to the end may take, in seconds.
        #[arg(long, default_value_t = 120)]
        timeout_secs: u64,
    },
}

/// Prints the verdict of `connect-worker verify`; true when exact.
#[allow(clippy::print_stdout)]
fn run_verify(
    bootstrap: &str,
    command_config: Option<&std::path::Path>,
    topic: &str,
    tasks: Option<usize>,
    timeout: Duration,
) -> anyhow::Result<bool> {
    let client = connect_worker::verify::verify_client(bootstrap, command_config)?;
    let report = connect_worker::verify::verify_topic(client, topic, timeout)?;
    for (task, c) in &report.tasks {
        println!(
            "task {task}: records={} distinct={} duplicates={} gaps={} max_seqno={}",
            c.records, c.distinct, c.duplicates, c.gaps, c.max_seqno
        );
    }
    if report.unparsable > 0 {
        println!("unparsable records: {}", report.unparsable);
    }
    let exact = report.is_exact(tasks);
    println!(
        "{}",
        if exact {
            "EXACT: every seqno of every task exactly once"
        } else {
            "NOT EXACT"
        }
    );
    Ok(exact)
}

/// The log format: `text` (default) or `json`.
const LOG_FORMAT_ENV: &str = "CONNECT_LOG_FORMAT";

/// mimalloc instead of glibc's malloc: a record's trip through transforms and converters is
/// mostly small short-lived allocations, where it is markedly faster (README, Benchmarks).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // The filter is reloadable so `PUT /admin/loggers/{name}` changes levels at run time.
    let base_filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "info,rdkafka=warn".into());
    let filter = tracing_subscriber::EnvFilter::try_new(&base_filter)
        .unwrap_or_else(|_| "info,rdkafka=warn".into());
    // `CONNECT_LOG_FORMAT=json`: one JSON object per line, with the span fields (`connector`,
    // `task`, `worker_id`) of the line's task or connector.
    let log_levels = match std::env::var(LOG_FORMAT_ENV).as_deref() {
        Err(_) | Ok("" | "text") => {
            let builder = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_filter_reloading();
            let levels = LogLevels::new(builder.reload_handle(), &base_filter);
            builder.init();
            levels
        }
        Ok("json") => {
            let builder = tracing_subscriber::fmt()
                .json()
                .with_current_span(true)
                .with_span_list(false)
                .with_env_filter(filter)
                .with_filter_reloading();
            let levels = LogLevels::new(builder.reload_handle(), &base_filter);
            builder.init();
            levels
        }
        Ok(other) => {
            anyhow::bail!("{LOG_FORMAT_ENV}={other} is not a log format: use text or json");
        }
    };
    let cli = Cli::parse();
    if let Some(Command::Verify {
        bootstrap_servers,
        command_config,
        topic,
        tasks,
        timeout_secs,
    }) = cli.command
    {
        let exact = tokio::task::spawn_blocking(move || {
            run_verify(
                &bootstrap_servers,
                command_config.as_deref(),
                &topic,
                tasks,
                Duration::from_secs(timeout_secs),
            )
        })
        .await??;
        std::process::exit(if exact { 0 } else { 1 });
    }
    let Some(properties) = cli.worker_properties else {
        anyhow::bail!("usage: connect-worker <worker.properties> | connect-worker verify --help");
    };
    let config = Arc::new(WorkerConfig::from_file(&properties)?);
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutdown requested");
            shutdown.cancel();
        }
    });
    connect_worker::app::start(config, log_levels, shutdown).await?;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
