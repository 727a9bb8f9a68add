//! `connect-worker <worker.properties>`: starts one distributed worker; `connect-worker
//! standalone` starts a standalone one (also as `connect-standalone`); `connect-worker check`
//! and `connect-worker verify` are tools around them.
//!
//! It parses the arguments (a usage error prints the usage and exits 2), sets up logging and
//! runs [`connect_worker::app::start`] until SIGTERM or Ctrl-C, or dispatches to a subcommand.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser};
use tokio_util::sync::CancellationToken;

use connect_worker::config::WorkerConfig;
use connect_worker::logging::LogLevels;

/// A Kafka Connect-compatible distributed worker.
#[derive(Debug, Parser)]
#[command(
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    /// Worker config in Java .properties format (the keys of connect-distributed.properties):
    /// starts a worker with it.
    #[arg(
        value_name = "worker.properties",
        required = true,
        value_parser = properties_or_subcommand
    )]
    worker_properties: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Run a standalone worker (Apache's connect-standalone): no group and no internal
    /// topics; connector configs and statuses in memory (connectors created over REST are
    /// gone after a restart), source offsets in offset.storage.file.filename. Also run as
    /// `connect-standalone <worker.properties> [connector files ...]` through a link of that
    /// name.
    Standalone {
        /// Worker config in Java .properties format (the keys of connect-standalone.properties).
        #[arg(value_name = "worker.properties", value_parser = existing_file)]
        worker_properties: PathBuf,
        /// Connectors to create at start, in order: Java .properties files or JSON, either a
        /// flat object of strings or {"name": ..., "config": {...}}; each needs `name`.
        #[arg(value_name = "connector.properties|connector.json")]
        connector_files: Vec<PathBuf>,
    },
    /// Before moving an Apache Kafka Connect cluster onto this worker: check its worker
    /// properties (refused values; ignored and unknown keys) and, on its Kafka cluster, whether
    /// every connector of its config topic can run here. Writes nothing. Exits 0 when nothing
    /// would be refused or unable to run, 1 otherwise.
    Check {
        /// The Apache cluster's worker config (the file its workers run with).
        #[arg(value_name = "worker.properties", value_parser = existing_file)]
        worker_properties: PathBuf,
        /// Check the properties file only; do not connect to Kafka.
        #[arg(long)]
        no_kafka: bool,
    },
    /// Check a topic written by the verifiable source: read it with read_committed and require
    /// every seqno of every task exactly once, no gap. Exits 0 only when exact.
    Verify {
        /// The Kafka cluster to read from.
        #[arg(long)]
        bootstrap_servers: String,
        /// A properties file of Java client keys (security.protocol, sasl.*, ssl.*...).
        #[arg(long)]
        command_config: Option<PathBuf>,
        /// The topic the verifiable source wrote.
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

/// A properties file that exists: a wrong path is a usage error.
fn existing_file(arg: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(arg);
    if path.exists() {
        Ok(path)
    } else {
        Err("no such file".to_owned())
    }
}

/// [`existing_file`], where a subcommand may stand instead: a name that is neither (a mistyped
/// subcommand, a wrong path) is a usage error naming the subcommands.
fn properties_or_subcommand(arg: &str) -> Result<PathBuf, String> {
    existing_file(arg).map_err(|_| {
        let commands: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .filter(|n| n != "help")
            .collect();
        format!("no such file, nor a subcommand ({})", commands.join(", "))
    })
}

/// `name --long <VALUE> [--optional <VALUE>] <positional>`: every argument of a subcommand.
fn synopsis(command: &clap::Command) -> String {
    let mut parts = vec![command.get_name().to_owned()];
    for arg in command.get_arguments().filter(|a| a.get_id() != "help") {
        let value = arg
            .get_value_names()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
        let text = match arg.get_long() {
            Some(long) if arg.get_action().takes_values() => format!("--{long} <{value}>"),
            Some(long) => format!("--{long}"),
            None if matches!(arg.get_action(), clap::ArgAction::Append) => format!("<{value}>..."),
            None => format!("<{value}>"),
        };
        parts.push(if arg.is_required_set() {
            text
        } else {
            format!("[{text}]")
        });
    }
    parts.join(" ")
}

/// Parses the arguments; a usage error prints the usage to stderr and exits 2. The help of
/// the whole command ends with every subcommand's synopsis, so `--help` names every argument.
fn parse_cli() -> Cli {
    let mut command = Cli::command();
    command.build();
    let synopses: Vec<String> = command
        .get_subcommands()
        .filter(|c| c.get_name() != "help")
        .map(|c| format!("  connect-worker {}", synopsis(c)))
        .collect();
    let args = cli_args();
    let mut command = command.after_help(format!(
        "Subcommands and their arguments (`connect-worker <COMMAND> --help` explains each):\n{}",
        synopses.join("\n")
    ));
    // The usage of the subcommand being run, if one is.
    let usage = match args
        .get(1)
        .cloned()
        .and_then(|a| command.find_subcommand_mut(&a).cloned())
    {
        Some(mut sub) => sub.render_usage(),
        None => command.render_usage(),
    };
    let matches = command.try_get_matches_from(args).unwrap_or_else(|e| {
        if e.use_stderr() && !e.to_string().contains("Usage:") {
            // Not every clap error shows the usage (an invalid value does not).
            let _ = e.print();
            eprintln!("\n{usage}");
            std::process::exit(2);
        }
        e.exit()
    });
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The program name of Apache's standalone script: run under that name (a link to this
/// binary), the arguments are those of `connect-worker standalone`.
const STANDALONE_PROGRAM: &str = "connect-standalone";

/// The arguments, as `connect-worker standalone ...` when run as [`STANDALONE_PROGRAM`].
fn cli_args() -> Vec<String> {
    let mut args: Vec<String> = std::env::args().collect();
    let program = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(".sh").to_owned());
    if program.as_deref() == Some(STANDALONE_PROGRAM) {
        args[0] = "connect-worker".to_owned();
        args.insert(1, "standalone".to_owned());
    }
    args
}

/// Exit status when a connector file of a standalone worker cannot be used (Apache's
/// `ConnectStandalone` exits 3 on a connector error).
const EXIT_CONNECTOR_FILE: i32 = 3;

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
    let cli = parse_cli();
    // The schema registry converters join the built-in ones for every subcommand.
    connect_registry::install();
    // Connectors with Kafka clients of their own (MirrorMaker 2) get the worker's translation.
    connect_api::kafka_clients::install(Box::new(
        connect_worker::config::clients::ConnectorClientTranslator,
    ));
    // ... and the worker's own Kafka protocol client, for what librdkafka lacks (ACLs).
    connect_api::kafka_clients::install_connector(Box::new(
        connect_worker::cluster::connector_requests::ConnectorConnections,
    ));
    match cli.command {
        Some(Command::Check {
            worker_properties,
            no_kafka,
        }) => {
            init_tool_logging("error");
            let report = connect_worker::check::run(&worker_properties, !no_kafka).await;
            print_report(&report.render());
            std::process::exit(report.exit_code());
        }
        Some(Command::Verify {
            bootstrap_servers,
            command_config,
            topic,
            tasks,
            timeout_secs,
        }) => {
            init_tool_logging("warn");
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
        Some(Command::Standalone {
            worker_properties,
            connector_files,
        }) => {
            let log_levels = init_worker_logging()?;
            let config = connect_worker::config::standalone::StandaloneConfig::from_file(
                &worker_properties,
            )?;
            // Every file is read before anything starts: a bad one is a start-up error
            // naming it (Apache reads them once its REST server runs).
            let mut connectors = Vec::new();
            for path in &connector_files {
                match connect_worker::config::standalone::read_connector_file(path) {
                    Ok(c) => connectors.push(c),
                    Err(e) => {
                        tracing::error!(file = %path.display(), "{e}");
                        eprintln!("{e}");
                        std::process::exit(EXIT_CONNECTOR_FILE);
                    }
                }
            }
            let shutdown = shutdown_on_signal();
            match connect_worker::app::start_standalone(config, connectors, log_levels, shutdown)
                .await
            {
                Ok(()) => return Ok(()),
                Err(e @ connect_worker::app::StartError::ConnectorFile { .. }) => {
                    eprintln!("{e}");
                    std::process::exit(EXIT_CONNECTOR_FILE);
                }
                Err(e) => return Err(e.into()),
            }
        }
        None => {}
    }
    let properties = cli
        .worker_properties
        .expect("clap requires the properties file without a subcommand");
    let log_levels = init_worker_logging()?;
    let config = Arc::new(WorkerConfig::from_file(&properties)?);
    let shutdown = shutdown_on_signal();
    connect_worker::app::start(config, log_levels, shutdown).await?;
    Ok(())
}

/// A token cancelled at SIGTERM or Ctrl-C.
fn shutdown_on_signal() -> CancellationToken {
    let shutdown = CancellationToken::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move {
            shutdown_signal().await;
            tracing::info!("shutdown requested");
            shutdown.cancel();
        }
    });
    shutdown
}

#[allow(clippy::print_stdout)]
fn print_report(text: &str) {
    print!("{text}");
}

/// The subcommands' logging: to stderr (their report goes to stdout), `RUST_LOG` or `default`.
fn init_tool_logging(default: &str) {
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|f| tracing_subscriber::EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| default.into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// The worker's logging: `RUST_LOG` (default `info,rdkafka=warn`), reloadable so
/// `PUT /admin/loggers/{name}` changes levels at run time.
fn init_worker_logging() -> anyhow::Result<LogLevels> {
    let base_filter = std::env::var("RUST_LOG").unwrap_or_else(|_| "info,rdkafka=warn".into());
    let filter = tracing_subscriber::EnvFilter::try_new(&base_filter)
        .unwrap_or_else(|_| "info,rdkafka=warn".into());
    // `CONNECT_LOG_FORMAT=json`: one JSON object per line, with the span fields (`connector`,
    // `task`, `worker_id`) of the line's task or connector.
    Ok(match std::env::var(LOG_FORMAT_ENV).as_deref() {
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
    })
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
