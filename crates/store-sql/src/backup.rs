//! Backups of a running store, and restoring one into an empty database.
//!
//! SQLite: `VACUUM INTO` copies the database as one read transaction sees it, while
//! writers go on (WAL); the copy is a plain SQLite file. PostgreSQL: `pg_dump
//! --format=custom` of the schema the URL's search path selects, which reads one snapshot;
//! `pg_restore --single-transaction` puts it back whole or not at all. Either way the file
//! appears under its name only once it is complete (written beside it, synced, renamed), so
//! a crash never leaves a half backup or a half restored database behind.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail, ensure};
use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{Connection, QueryableByName, SqliteConnection};

use crate::pool::Backend;
use crate::tls::PgTarget;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The first bytes of a `pg_dump --format=custom` archive.
const PG_DUMP_MAGIC: &[u8] = b"PGDMP";

/// The PostgreSQL client programs backups run (`pg_dump`, `pg_restore`): they must be of
/// the server's major version or newer.
#[derive(Debug, Clone)]
pub struct PgTools {
    pub pg_dump: PathBuf,
    pub pg_restore: PathBuf,
}

impl Default for PgTools {
    fn default() -> Self {
        Self { pg_dump: "pg_dump".into(), pg_restore: "pg_restore".into() }
    }
}

/// Writes a consistent backup of the database at `backend` to `to` while it serves, and
/// returns its size in bytes. An existing file at `to` is replaced only once the new backup
/// is complete.
pub async fn backup(backend: &Backend, to: &Path, tools: &PgTools) -> anyhow::Result<u64> {
    let partial = partial_path(to);
    remove_if_present(&partial)?;
    let written = match backend {
        Backend::Sqlite(path) => {
            let (path, partial) = (sqlite_file(path)?, partial.clone());
            tokio::task::spawn_blocking(move || vacuum_into(&path, &partial)).await?
        }
        Backend::Postgres(url) => {
            let schema = postgres_schema(url).await?.with_context(
                || "the search path of DATABASE_URL selects no schema that exists: nothing to back up",
            )?;
            let (tools, url, partial) = (tools.clone(), url.clone(), partial.clone());
            tokio::task::spawn_blocking(move || {
                let mut dump = pg_command(&tools.pg_dump, &url)?;
                dump.args(["--format=custom", "--no-owner", "--no-privileges"])
                    .arg(format!("--schema={}", quote_identifier(&schema)))
                    .arg("--file")
                    .arg(&partial);
                run(dump, "pg_dump")
            })
            .await?
        }
    };
    if let Err(error) = written.and_then(|()| publish(&partial, to)) {
        let _ = std::fs::remove_file(&partial);
        return Err(error);
    }
    Ok(std::fs::metadata(to).with_context(|| format!("reading {}", to.display()))?.len())
}

/// Restores the backup at `from` into the database at `backend`, which must hold no table
/// yet. Migrations do not run here: the store's next open brings an older backup up to date.
pub async fn restore(backend: &Backend, from: &Path, tools: &PgTools) -> anyhow::Result<()> {
    let kind = backup_kind(from)?;
    match backend {
        Backend::Sqlite(path) => {
            ensure!(
                kind == BackupKind::Sqlite,
                "{} is a PostgreSQL backup: restore it with a postgres:// DATABASE_URL",
                from.display()
            );
            let (target, from) = (sqlite_file(path)?, from.to_owned());
            tokio::task::spawn_blocking(move || restore_sqlite(&from, &target)).await?
        }
        Backend::Postgres(url) => {
            ensure!(
                kind == BackupKind::Postgres,
                "{} is a SQLite backup: restore it with a sqlite:// DATABASE_URL",
                from.display()
            );
            restore_postgres(url, from, tools).await
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BackupKind {
    Sqlite,
    Postgres,
}

fn backup_kind(path: &Path) -> anyhow::Result<BackupKind> {
    let mut head = [0; 16];
    let mut file =
        std::fs::File::open(path).with_context(|| format!("opening the backup {}", path.display()))?;
    let read = file.read(&mut head).with_context(|| format!("reading the backup {}", path.display()))?;
    match &head[..read] {
        head if head.starts_with(SQLITE_MAGIC) => Ok(BackupKind::Sqlite),
        head if head.starts_with(PG_DUMP_MAGIC) => Ok(BackupKind::Postgres),
        _ => bail!("{} is not a backup of billable (a SQLite file or a pg_dump archive)", path.display()),
    }
}

/// The file of a SQLite URL's path; `:memory:` has none.
fn sqlite_file(path: &str) -> anyhow::Result<PathBuf> {
    ensure!(path != ":memory:", "an in-memory SQLite database keeps nothing to back up or restore");
    Ok(PathBuf::from(path))
}

/// Where a file is written before it is renamed to `path`.
fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".partial");
    path.with_file_name(name)
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Syncs the complete file at `partial` and renames it to `path`, syncing the directory so
/// the new name survives a power cut.
fn publish(partial: &Path, path: &Path) -> anyhow::Result<()> {
    std::fs::File::open(partial)
        .and_then(|file| file.sync_all())
        .with_context(|| format!("syncing {}", partial.display()))?;
    std::fs::rename(partial, path)
        .with_context(|| format!("renaming {} to {}", partial.display(), path.display()))?;
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)
        .and_then(|dir| dir.sync_all())
        .with_context(|| format!("syncing {}", dir.display()))
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    line: String,
}

/// Copies the SQLite database at `path` to the new file `to` as one read transaction sees
/// it, in rollback-journal mode so that the copy is one self-contained file.
fn vacuum_into(path: &Path, to: &Path) -> anyhow::Result<()> {
    use diesel::RunQueryDsl;
    ensure!(path.is_file(), "there is no SQLite database at {}", path.display());
    let mut conn = open_sqlite(path)?;
    conn.batch_execute("PRAGMA busy_timeout = 30000")?;
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(to.to_string_lossy())
        .execute(&mut conn)
        .with_context(|| format!("copying {} into {}", path.display(), to.display()))?;
    let mut copy = open_sqlite(to)?;
    copy.batch_execute("PRAGMA journal_mode = DELETE").context("setting the backup's journal mode")?;
    Ok(())
}

fn open_sqlite(path: &Path) -> anyhow::Result<SqliteConnection> {
    let location = path.to_str().with_context(|| format!("{} is not a UTF-8 path", path.display()))?;
    SqliteConnection::establish(location)
        .with_context(|| format!("opening SQLite database {}", path.display()))
}

/// The tables of a SQLite database.
fn sqlite_tables(conn: &mut SqliteConnection) -> anyhow::Result<i64> {
    use diesel::RunQueryDsl;
    let count = diesel::sql_query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'")
        .get_result::<Count>(conn)?;
    Ok(count.n)
}

fn restore_sqlite(from: &Path, target: &Path) -> anyhow::Result<()> {
    if target.exists() {
        let tables = sqlite_tables(&mut open_sqlite(target)?)?;
        ensure!(
            tables == 0,
            "the database at {} is not empty ({tables} tables): restore into a new file",
            target.display()
        );
    }
    let partial = partial_path(target);
    remove_if_present(&partial)?;
    let copied = std::fs::copy(from, &partial)
        .with_context(|| format!("copying {} to {}", from.display(), partial.display()))
        .and_then(|_| check_sqlite_backup(from, &partial))
        .and_then(|()| {
            // What an empty database left beside it must not be read as the restored one's.
            for suffix in ["-wal", "-shm"] {
                let mut name = target.as_os_str().to_owned();
                name.push(suffix);
                remove_if_present(Path::new(&name))?;
            }
            publish(&partial, target)
        });
    if copied.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    copied
}

/// Refuses a copy that is damaged or not billable's.
fn check_sqlite_backup(from: &Path, copy: &Path) -> anyhow::Result<()> {
    use diesel::RunQueryDsl;
    let mut conn = open_sqlite(copy)?;
    let verdict = diesel::sql_query("SELECT integrity_check AS line FROM pragma_integrity_check")
        .load::<Line>(&mut conn)?
        .into_iter()
        .map(|l| l.line)
        .collect::<Vec<_>>()
        .join("; ");
    ensure!(verdict == "ok", "the backup {} is damaged: {verdict}", from.display());
    let migrations = diesel::sql_query(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = '__diesel_schema_migrations'",
    )
    .get_result::<Count>(&mut conn)?;
    ensure!(migrations.n == 1, "{} is a SQLite file, but not a database of billable", from.display());
    Ok(())
}

#[derive(QueryableByName)]
struct SchemaName {
    #[diesel(sql_type = Nullable<Text>)]
    schema: Option<String>,
}

/// The schema the search path of `url` selects, if it exists.
async fn postgres_schema(url: &str) -> anyhow::Result<Option<String>> {
    use diesel_async::RunQueryDsl;
    let mut conn = PgTarget::from_url(url)?.connect().await.context("connecting to PostgreSQL")?;
    let found =
        diesel::sql_query("SELECT current_schema() AS schema").get_result::<SchemaName>(&mut conn).await?;
    Ok(found.schema)
}

async fn restore_postgres(url: &str, from: &Path, tools: &PgTools) -> anyhow::Result<()> {
    use diesel_async::RunQueryDsl;
    let listing = {
        let (tools, url, from) = (tools.clone(), url.to_owned(), from.to_owned());
        tokio::task::spawn_blocking(move || {
            let mut list = pg_command(&tools.pg_restore, &url)?;
            list.arg("--list").arg(&from);
            output(list, "pg_restore --list")
        })
        .await??
    };
    let schema = archived_schema(&listing)
        .with_context(|| format!("{} holds no schema: it is not a backup of billable", from.display()))?;
    let mut conn = PgTarget::from_url(url)?.connect().await.context("connecting to PostgreSQL")?;
    let selected =
        diesel::sql_query("SELECT current_schema() AS schema").get_result::<SchemaName>(&mut conn).await?;
    if let Some(selected) = selected.schema.filter(|selected| *selected != schema) {
        bail!(
            "the backup holds the schema {schema:?}, but the search path of DATABASE_URL selects {selected:?}: \
             set search_path to {schema:?} (options=-c search_path={schema})"
        );
    }
    let relations = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = $1",
    )
    .bind::<Text, _>(&schema)
    .get_result::<Count>(&mut conn)
    .await?;
    ensure!(
        relations.n == 0,
        "the schema {schema:?} of the database is not empty ({} relations): restore into an empty database",
        relations.n
    );
    let exists = diesel::sql_query("SELECT count(*) AS n FROM pg_namespace WHERE nspname = $1")
        .bind::<Text, _>(&schema)
        .get_result::<Count>(&mut conn)
        .await?;
    drop(conn);
    // An empty schema of that name (public, in a new database) is used as it is.
    let mut entries =
        listing.lines().filter(|line| exists.n == 0 || !is_schema_entry(line)).collect::<Vec<_>>().join("\n");
    entries.push('\n');
    let (tools, url, from) = (tools.clone(), url.to_owned(), from.to_owned());
    tokio::task::spawn_blocking(move || {
        let list =
            partial_path(&std::env::temp_dir().join(format!("billable-restore-{}.list", std::process::id())));
        std::fs::write(&list, entries).with_context(|| format!("writing {}", list.display()))?;
        let mut restore = pg_command(&tools.pg_restore, &url)?;
        restore
            .args(["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction"])
            .arg("--use-list")
            .arg(&list)
            .arg(&from);
        let restored = run(restore, "pg_restore");
        let _ = std::fs::remove_file(&list);
        restored
    })
    .await?
}

/// The schema a `pg_restore --list` names (`…; 2615 … SCHEMA - name owner`).
fn archived_schema(listing: &str) -> Option<String> {
    listing.lines().filter(|line| !line.starts_with(';')).find_map(|line| {
        let (_, rest) = line.split_once(" SCHEMA - ")?;
        rest.split_whitespace().next().map(str::to_owned)
    })
}

/// The entries that make the schema itself: its `CREATE SCHEMA` and its comment.
fn is_schema_entry(line: &str) -> bool {
    !line.starts_with(';') && (line.contains(" SCHEMA - ") || line.contains(" COMMENT - SCHEMA "))
}

/// `program` on the database at `url`, its password handed over in the environment
/// rather than on a command line that every user of the machine can read.
fn pg_command(program: &Path, url: &str) -> anyhow::Result<Command> {
    let mut parsed = url::Url::parse(url).context("DATABASE_URL is not a URL")?;
    let mut command = Command::new(program);
    if let Some(password) = parsed.password() {
        let password = percent_encoding::percent_decode_str(password).decode_utf8_lossy().into_owned();
        command.env("PGPASSWORD", password);
        let _ = parsed.set_password(None);
    }
    command.arg("--dbname").arg(parsed.as_str());
    Ok(command)
}

/// Runs `command`, failing with what it wrote on stderr.
fn run(command: Command, name: &str) -> anyhow::Result<()> {
    output(command, name).map(drop)
}

/// What `command` writes on stdout; fails with what it wrote on stderr.
fn output(mut command: Command, name: &str) -> anyhow::Result<String> {
    let out =
        command.output().with_context(|| format!("running {name} ({})", command.get_program().display()))?;
    if !out.status.success() {
        let stderr = out.stderr.lines().map_while(Result::ok).collect::<Vec<_>>().join("; ");
        bail!("{name} failed ({}): {stderr}", out.status);
    }
    String::from_utf8(out.stdout).with_context(|| format!("{name} wrote other than UTF-8"))
}

/// `name` as a double-quoted identifier, which `pg_dump`'s patterns take literally.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::{archived_schema, is_schema_entry, partial_path};

    const LISTING: &str = "\
;
; Archive created at 2026-11-29 15:40:00 UTC
;
4; 2615 2200 SCHEMA - public pg_database_owner
3351; 0 0 COMMENT - SCHEMA public pg_database_owner
215; 1259 16389 TABLE public invoices postgres
";

    #[test]
    fn the_schema_of_a_listing_is_found_and_its_entries_told_apart() {
        assert_eq!(archived_schema(LISTING).as_deref(), Some("public"));
        let kept: Vec<_> = LISTING.lines().filter(|line| !is_schema_entry(line)).collect();
        assert_eq!(kept.last(), Some(&"215; 1259 16389 TABLE public invoices postgres"));
        assert_eq!(kept.len(), 4);
        assert_eq!(archived_schema("; nothing\n"), None);
    }

    #[test]
    fn a_partial_file_sits_beside_its_final_name() {
        assert_eq!(partial_path("/backups/b.dump".as_ref()), std::path::Path::new("/backups/b.dump.partial"));
    }
}
