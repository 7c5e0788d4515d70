//! In-process figures over the library: refresh cost in a huge chat, its
//! cold load, and filling a data directory for the restart figure.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use recapd::domain::chat::{Chat, ChatEvent};
use recapd::domain::ids::ChatKey;
use recapd::domain::refresh::{RefreshContext, Trigger, refresh};
use recapd::domain::settings::Settings;
use recapd::domain::time::UnixMicros;
use recapd::domain::tokens;
use recapd::store::{ChatMeta, ChatStore, SqliteStore, Write};

use crate::fixtures::{TEXT, build_chat, message};
use crate::stats::summarize;

type Error = Box<dyn std::error::Error>;

/// Runs the store's async calls from these synchronous commands.
fn block_on<F: Future>(work: F) -> Result<F::Output, Error> {
    Ok(tokio::runtime::Runtime::new()?.block_on(work))
}

/// `big-chat`: a chat of `messages` messages with recaps and scene breaks.
#[derive(clap::Args)]
pub struct BigChat {
    #[arg(long, default_value_t = 100_000)]
    messages: usize,
    #[arg(long, default_value_t = 200)]
    appends: usize,
}

pub fn big_chat(args: BigChat) -> Result<(), Error> {
    let settings = Settings::default();
    tokens::warm_up(settings.inclusion.tokenizer);
    let mut chat = build_chat(args.messages);

    // Cold load: the rows from disk back into a chat.
    let dir = tempfile::tempdir()?;
    let big = ChatKey::untenanted("big");
    let mut writes: Vec<Write> = chat
        .messages()
        .map(|(seq, m)| Write::Message {
            chat: big.clone(),
            seq,
            message: m.clone(),
        })
        .collect();
    writes.extend(chat.recaps().versions().map(|v| Write::Recap {
        chat: big.clone(),
        version: v.clone(),
    }));
    writes.push(Write::Chat {
        chat: big.clone(),
        meta: ChatMeta {
            current_recap: Some(0),
            ..Default::default()
        },
    });
    block_on(async {
        let store = SqliteStore::open(dir.path(), false).await?;
        store.commit(writes).await?;
        store.close().await;
        Ok::<_, Error>(())
    })??;
    let started = Instant::now();
    let stored = block_on(async {
        let store = SqliteStore::open(dir.path(), false).await?;
        Ok::<_, Error>(store.load(&big).await?.chat)
    })??
    .ok_or("stored chat is missing")?;
    let loaded = Chat::from_parts(stored.messages, stored.recaps, stored.meta.current_recap);
    let cold = started.elapsed();
    assert_eq!(loaded.len(), chat.len());

    // One appended message, then the refresh it leads to, as the engine runs
    // it: the injection's token count is reused while its text is unchanged.
    let mut previous = refresh(&chat, context(&settings, 1), |t| {
        tokens::count(settings.inclusion.tokenizer, t)
    });
    let mut samples = Vec::with_capacity(args.appends);
    for i in 0..args.appends {
        let started = Instant::now();
        chat.apply(ChatEvent::MessageSent(message(args.messages + i, TEXT)))?;
        let next = refresh(&chat, context(&settings, previous.revision + 1), |text| {
            if text == previous.text {
                previous.token_count
            } else {
                tokens::count(settings.inclusion.tokenizer, text)
            }
        });
        samples.push(started.elapsed());
        previous = next;
    }
    let summary = summarize(samples, Duration::from_secs(1));
    println!(
        "big_chat messages={} cold_load_ms={:.1} append_refresh_p50_ms={:.4} append_refresh_p99_ms={:.4} auto_hidden={}",
        args.messages,
        cold.as_secs_f64() * 1e3,
        summary.p50.as_secs_f64() * 1e3,
        summary.p99.as_secs_f64() * 1e3,
        previous.auto_hidden_count,
    );
    Ok(())
}

static BIG: std::sync::LazyLock<ChatKey> = std::sync::LazyLock::new(|| ChatKey::untenanted("big"));

/// The default vocabulary's counter.
static COUNTER: std::sync::LazyLock<recapd::domain::tokens::Counter> =
    std::sync::LazyLock::new(recapd::domain::tokens::Counter::default);

fn context(settings: &Settings, revision: u64) -> RefreshContext<'_> {
    RefreshContext {
        counter: &COUNTER,
        chat: &BIG,
        settings,
        enabled: true,
        revision,
        trigger: Trigger::MessageSent,
        now_us: UnixMicros(0),
    }
}

/// `fill`: a data directory of about `megabytes` MB.
#[derive(clap::Args)]
pub struct Fill {
    #[arg(long)]
    data_dir: PathBuf,
    #[arg(long, default_value_t = 1024)]
    megabytes: u64,
    #[arg(long, default_value_t = 1000)]
    messages_per_chat: usize,
}

pub fn fill(args: Fill) -> Result<(), Error> {
    std::fs::create_dir_all(&args.data_dir)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let store = runtime.block_on(SqliteStore::open(&args.data_dir, false))?;
    let db = args.data_dir.join(recapd::store::sqlite::DB_FILE);
    let wal = args
        .data_dir
        .join(format!("{}-wal", recapd::store::sqlite::DB_FILE));
    let size = || {
        std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0)
            + std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0)
    };
    let target = args.megabytes * 1024 * 1024;
    let text = TEXT.repeat(4);
    let started = Instant::now();
    let mut chats = 0usize;
    while size() < target {
        let chat = ChatKey::untenanted(&format!("fill-{chats}"));
        let mut writes: Vec<Write> = (0..args.messages_per_chat)
            .map(|i| Write::Message {
                chat: chat.clone(),
                seq: i as i64,
                message: message(i, &text),
            })
            .collect();
        writes.push(Write::Chat {
            chat,
            meta: ChatMeta::default(),
        });
        runtime.block_on(store.commit(writes))?;
        chats += 1;
    }
    runtime.block_on(store.close());
    println!(
        "filled chats={chats} megabytes={} seconds={:.1}",
        size() / (1024 * 1024),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
