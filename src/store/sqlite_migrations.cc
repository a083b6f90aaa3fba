// The SQLite schema, as numbered migrations. Never edit a migration that has shipped: add one.
#include <string>
#include <vector>

#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

const std::vector<std::string>& Migrations() {
  static const std::vector<std::string> kMigrations = {
      // 1: projects, tokens, queues and messages.
      R"sql(
      CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL);
      CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER);
      CREATE INDEX tokens_project ON tokens(project_id);
      CREATE TABLE queues (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        config TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (project_id, name));
      CREATE TABLE messages (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        queue_id INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        body BLOB NOT NULL,
        body_md5 TEXT NOT NULL,
        attributes TEXT NOT NULL,
        sent_at INTEGER NOT NULL,
        visible_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        receive_count INTEGER NOT NULL DEFAULT 0,
        first_received_at INTEGER NOT NULL DEFAULT 0,
        receipt INTEGER NOT NULL DEFAULT 0,
        group_id TEXT NOT NULL DEFAULT '',
        dedup_id TEXT NOT NULL DEFAULT '',
        source_queue_id INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX messages_ready ON messages(queue_id, visible_at);
      CREATE INDEX messages_expiry ON messages(expires_at);
      CREATE TABLE dedup (
        queue_id INTEGER NOT NULL,
        dedup_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (queue_id, dedup_id));
      )sql",
      // 2: buckets, objects' metadata and pending blobs. Keys are BLOBs so that they compare
      // as bytes.
      R"sql(
      CREATE TABLE buckets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (project_id, name));
      CREATE TABLE objects (
        bucket_id INTEGER NOT NULL,
        key BLOB NOT NULL,
        size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        content_type TEXT NOT NULL,
        user_metadata TEXT NOT NULL,
        blob_id TEXT NOT NULL,
        modified_at INTEGER NOT NULL,
        PRIMARY KEY (bucket_id, key)) WITHOUT ROWID;
      CREATE TABLE pending_blobs (
        blob_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        created_at INTEGER NOT NULL);
      CREATE INDEX pending_blobs_owner ON pending_blobs(owner, created_at);
      )sql",
      // 3: the fleet's nodes, managed jobs, their events and metrics.
      R"sql(
      CREATE TABLE nodes (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        info TEXT NOT NULL,
        registered_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL,
        drain TEXT NOT NULL DEFAULT '');
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        version INTEGER NOT NULL,
        priority INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        doc TEXT NOT NULL);
      CREATE INDEX jobs_project ON jobs(project_id, created_at);
      CREATE INDEX jobs_state ON jobs(state, created_at);
      CREATE TABLE job_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL,
        at INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL);
      CREATE INDEX job_events_job ON job_events(job_id, seq);
      CREATE TABLE job_metrics (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        name TEXT NOT NULL,
        step INTEGER NOT NULL,
        value TEXT NOT NULL,
        at INTEGER NOT NULL);
      CREATE INDEX job_metrics_job ON job_metrics(job_id, seq);
      )sql",
      // 4: S3 access keys. The secret is kept as it is: checking a signature needs it.
      R"sql(
      CREATE TABLE s3_access_keys (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        secret TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER);
      CREATE INDEX s3_access_keys_project ON s3_access_keys(project_id, created_at);
      )sql",
      // 5: what cost needs: the periods nodes were up (one per registration, the current ones
      // taken from the nodes already registered), budgets and the alerts they fired. Money is
      // REAL; an alert fires once per (budget, period, kind, threshold).
      R"sql(
      CREATE TABLE node_periods (
        node_id TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        info TEXT NOT NULL,
        PRIMARY KEY (node_id, epoch)) WITHOUT ROWID;
      CREATE INDEX node_periods_seen ON node_periods(last_seen_at);
      INSERT INTO node_periods
        SELECT id, epoch, registered_at, MAX(registered_at, heartbeat_at), info FROM nodes;
      CREATE TABLE budgets (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (project_id, name));
      CREATE TABLE budget_alerts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        budget_id TEXT NOT NULL,
        project_id TEXT NOT NULL,
        period_start INTEGER NOT NULL,
        kind TEXT NOT NULL,
        threshold REAL NOT NULL,
        fired_at INTEGER NOT NULL,
        spend REAL NOT NULL,
        amount REAL NOT NULL,
        message TEXT NOT NULL,
        next_delivery_at INTEGER,
        delivery_attempts INTEGER NOT NULL DEFAULT 0,
        delivered_at INTEGER,
        last_error TEXT NOT NULL DEFAULT '',
        UNIQUE (budget_id, period_start, kind, threshold));
      CREATE INDEX budget_alerts_project ON budget_alerts(project_id, seq);
      CREATE INDEX budget_alerts_due ON budget_alerts(next_delivery_at)
        WHERE next_delivery_at IS NOT NULL;
      )sql",
      // 6: datasets and their shards (docs/datasets.md). A dataset's shards are written with it,
      // in one transaction, and deleted with it.
      R"sql(
      CREATE TABLE datasets (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        sample_count INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        shard_size INTEGER NOT NULL,
        source_format TEXT NOT NULL,
        UNIQUE (project_id, name));
      CREATE TABLE dataset_shards (
        dataset_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        bucket TEXT NOT NULL,
        object_key TEXT NOT NULL,
        samples INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        first_sample INTEGER NOT NULL,
        PRIMARY KEY (dataset_id, ordinal)) WITHOUT ROWID;
      )sql",
      // 7: multipart uploads in progress and their stored parts (objects/multipart.h).
      R"sql(
      CREATE TABLE multipart_uploads (
        upload_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        project_id TEXT NOT NULL,
        bucket TEXT NOT NULL,
        key BLOB NOT NULL,
        content_type TEXT NOT NULL,
        user_metadata TEXT NOT NULL,
        initiated_at INTEGER NOT NULL);
      CREATE INDEX multipart_uploads_owner ON multipart_uploads(owner);
      CREATE TABLE multipart_parts (
        upload_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        size INTEGER NOT NULL,
        etag TEXT NOT NULL,
        blob_id TEXT NOT NULL UNIQUE,
        modified_at INTEGER NOT NULL,
        PRIMARY KEY (upload_id, number)) WITHOUT ROWID;
      )sql",
      // 8: objects kept as several blobs in a row (a completed multipart upload's parts). Such
      // an object's row has blob_id ''; its segments are numbered from 0 in content order.
      // Objects of one blob have no segments and their rows are as before.
      R"sql(
      CREATE TABLE object_segments (
        bucket_id INTEGER NOT NULL,
        key BLOB NOT NULL,
        number INTEGER NOT NULL,
        blob_id TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        PRIMARY KEY (bucket_id, key, number)) WITHOUT ROWID;
      )sql",
      // 9: what an object keeps beyond its content type and metadata: the representation
      // headers it was stored with (a JSON object: {"Cache-Control": "..."}), and the checksum a
      // client sent with it ("crc32c <base64>", or ''; a multipart upload's "crc32c <base64>-N").
      // An upload keeps its headers for the object that Complete makes, and the algorithm its
      // parts' checksums are of ("crc32c", or ''), and each part its checksum (base64, or '').
      R"sql(
      ALTER TABLE objects ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE objects ADD COLUMN checksum TEXT NOT NULL DEFAULT '';
      ALTER TABLE multipart_uploads ADD COLUMN headers TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE multipart_uploads ADD COLUMN checksum_algorithm TEXT NOT NULL DEFAULT '';
      ALTER TABLE multipart_parts ADD COLUMN checksum TEXT NOT NULL DEFAULT '';
      )sql",
      // 10: how a multipart upload's object checksum is made of its parts' checksums:
      // 'FULL_OBJECT' (the CRC of the whole content) or 'COMPOSITE' ('' too, for uploads begun
      // before it was kept); and the checksum each part of a completed upload was kept with
      // (base64, or ''), for GetObjectAttributes.
      R"sql(
      ALTER TABLE multipart_uploads ADD COLUMN checksum_type TEXT NOT NULL DEFAULT '';
      ALTER TABLE object_segments ADD COLUMN checksum TEXT NOT NULL DEFAULT '';
      )sql",
      // 11: inference endpoints (docs/endpoints.md): the spec, replicas and scaling decisions
      // are the service's JSON document; a name is unique within its project.
      R"sql(
      CREATE TABLE endpoints (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        doc TEXT NOT NULL,
        UNIQUE (project_id, name));
      )sql",
      // 12: each server's gateway load of each endpoint, for the leader's controller when
      // several servers share the store (endpoints/shared_load.h).
      R"sql(
      CREATE TABLE endpoint_loads (
        server_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        arrived INTEGER NOT NULL,
        queued INTEGER NOT NULL,
        in_flight INTEGER NOT NULL,
        replicas TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (server_id, endpoint_id));
      CREATE INDEX endpoint_loads_by_time ON endpoint_loads (updated_at);
      )sql",
      // 13: node pools (pools/): their spec as the user gave it, and the leader's view of
      // their machines and decisions.
      R"sql(
      CREATE TABLE pools (
        name TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        status TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL);
      )sql",
      // 14: what lets workers in (auth/): join tokens, which register new nodes only, and each
      // node's own credential (hashes: the secrets are never stored).
      R"sql(
      CREATE TABLE join_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        max_uses INTEGER NOT NULL,
        uses INTEGER NOT NULL,
        revoked_at INTEGER);
      CREATE TABLE node_credentials (
        node_id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        issued_at INTEGER NOT NULL);
      )sql",
      // 15: what each server's gateway answered of each endpoint, by short interval, for
      // `endpoint describe` on any server (endpoints/shared_traffic.h).
      R"sql(
      CREATE TABLE endpoint_traffic (
        server_id TEXT NOT NULL,
        endpoint_id TEXT NOT NULL,
        bucket_start INTEGER NOT NULL,
        summary TEXT NOT NULL,
        PRIMARY KEY (endpoint_id, bucket_start, server_id));
      CREATE INDEX endpoint_traffic_by_time ON endpoint_traffic (bucket_start);
      )sql",
      // 16: versioned documents of projects that a service owns whole (store.h DocumentStore):
      // sweeps (sweeps/sweep_doc.h); a name is unique within its project and kind.
      R"sql(
      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        doc TEXT NOT NULL,
        UNIQUE (kind, project_id, name));
      CREATE INDEX documents_by_state ON documents (kind, state);
      )sql",
  };
  return kMigrations;
}

}  // namespace

Result<int> MigrateSqlite(SqliteDb& db) {
  TF_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS schema_migrations ("
              "version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"));
  int current = 0;
  {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
    TF_ASSIGN_OR_RETURN(bool row, q.Step());
    if (row) current = static_cast<int>(q.Int(0));
  }
  const auto& migrations = Migrations();
  if (current > static_cast<int>(migrations.size())) {
    return FailedPrecondition("the database schema is version " + std::to_string(current) +
                              ", newer than this tensorfleet knows (" +
                              std::to_string(migrations.size()) + "): upgrade tensorfleet");
  }
  for (int v = current + 1; v <= static_cast<int>(migrations.size()); ++v) {
    TF_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
    Status s = db.Exec(migrations[v - 1]);
    if (s.ok()) {
      s = db.Exec("INSERT INTO schema_migrations VALUES (" + std::to_string(v) +
                  ", CAST(strftime('%s','now') AS INTEGER) * 1000)");
    }
    if (!s.ok()) {
      (void)db.Exec("ROLLBACK");
      return s.WithContext("migration " + std::to_string(v));
    }
    TF_RETURN_IF_ERROR(db.Exec("COMMIT"));
  }
  return static_cast<int>(migrations.size());
}

}  // namespace tf::store
