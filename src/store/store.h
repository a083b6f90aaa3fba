// The store: everything durable in tensorfleet lives behind this interface.
//
// Two implementations (SQLite and PostgreSQL) pass one contract test suite
// (tests/store_contract_test.cc). All methods are thread-safe and blocking (except the queue
// writes' non-blocking forms, QueueStore::async_writes); callers on the network threads run them
// on a blocking pool. Errors: kUnavailable when the database cannot be
// reached (retry), kInternal for anything unexpected; the other codes are documented per method.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/leadership.h"
#include "store/records.h"

namespace tf::store {

class AuthStore {
 public:
  virtual ~AuthStore() = default;
  // kAlreadyExists if a project of that name exists.
  virtual Status CreateProject(const Project& project) = 0;
  virtual Result<Project> GetProject(const std::string& id) = 0;          // kNotFound
  virtual Result<Project> GetProjectByName(const std::string& name) = 0;  // kNotFound
  virtual Result<std::vector<Project>> ListProjects() = 0;                // by name
  virtual Status CreateToken(const Token& token) = 0;
  // kNotFound if no token has this hash. Revoked tokens are returned with revoked_at set.
  virtual Result<Token> FindTokenByHash(const std::string& hash) = 0;
  // project_id empty: every project's tokens. Ordered by creation.
  virtual Result<std::vector<Token>> ListTokens(const std::string& project_id) = 0;
  // kNotFound if there is no such token; revoking twice keeps the first time.
  virtual Status RevokeToken(const std::string& id, TimeMs now) = 0;

  // Join tokens, of the whole fleet. kAlreadyExists for a used id.
  virtual Status CreateJoinToken(const JoinToken& token) = 0;
  virtual Result<JoinToken> FindJoinTokenByHash(const std::string& hash) = 0;  // kNotFound
  virtual Result<std::vector<JoinToken>> ListJoinTokens() = 0;                 // by creation
  // kNotFound if there is no such token; revoking twice keeps the first time.
  virtual Status RevokeJoinToken(const std::string& id, TimeMs now) = 0;
  // Forgets the join tokens that expired before `before`; returns how many.
  virtual Result<int64_t> DeleteJoinTokensExpiredBefore(TimeMs before) = 0;
  // The registered node whose credential has this SHA-256. kNotFound if none has, or the node
  // it was issued to has been forgotten (its credential dies with it).
  virtual Result<std::string> FindNodeByCredential(const std::string& hash) = 0;
};

class QueueStore {
 public:
  virtual ~QueueStore() = default;

  // Assigns queue.id. kAlreadyExists if the project has a queue of that name.
  virtual Result<Queue> CreateQueue(Queue queue) = 0;
  virtual Result<Queue> GetQueue(const std::string& project_id, const std::string& name) = 0;
  virtual Result<Queue> GetQueueById(int64_t id) = 0;
  // Queues of a project whose names start with `prefix`, by name.
  virtual Result<std::vector<Queue>> ListQueues(const std::string& project_id,
                                                const std::string& prefix) = 0;
  virtual Status UpdateQueueConfig(int64_t id, const QueueConfig& config, TimeMs now) = 0;
  // Deletes the queue and every message in it. kNotFound if absent.
  virtual Status DeleteQueue(int64_t id) = 0;

  // Enqueues all messages in one transaction, in order. A message with a deduplication id seen
  // in this queue less than `dedup_window_ms` ago is not enqueued again: its SentMessage has
  // duplicate=true and the first message's id (the queue service sets ids on FIFO queues only).
  // kNotFound if the queue does not exist.
  virtual Result<std::vector<SentMessage>> SendMessages(int64_t queue_id,
                                                        const std::vector<NewMessage>& messages,
                                                        TimeMs now, TimeMs dedup_window_ms) = 0;

  // Receives up to options.max_messages visible messages, hiding each until
  // now + visibility_timeout_ms and giving each a fresh receipt. Standard queues: oldest visible
  // first. FIFO queues: visible messages in sequence order, skipping every group that has a
  // message in flight. Messages past their receive limit move to the dead-letter queue instead
  // (see ReceiveOptions); there, standard messages keep their original send time for retention
  // and FIFO messages restart it.
  virtual Result<std::vector<ReceivedMessage>> ReceiveMessages(const ReceiveOptions& options,
                                                               TimeMs now) = 0;

  // One status per receipt, in order: OK if deleted (or already gone), kAborted if the message
  // has been received again since this receipt was issued (a stale receipt deletes nothing).
  virtual Result<std::vector<Status>> DeleteMessages(int64_t queue_id,
                                                     const std::vector<Receipt>& receipts) = 0;

  // One status per change: OK if the message is hidden until the new time; kAborted for a stale
  // receipt; kFailedPrecondition if the message is not in flight (its visibility expired at or
  // before `now`); kNotFound if the message no longer exists.
  virtual Result<std::vector<Status>> ChangeVisibility(int64_t queue_id,
                                                       const std::vector<VisibilityChange>& changes,
                                                       TimeMs now) = 0;

  // Non-blocking forms of SendMessages, ReceiveMessages and DeleteMessages, for callers that
  // must not wait (coroutines on the network threads). Each calls `done` exactly once with what
  // the blocking form returns. Where async_writes() is true they return at once and call `done`
  // later, on a thread of the store's that runs the next write once `done` returns: `done`
  // should hand the result on (post it) and return. Otherwise they run the blocking form on
  // the calling thread, so callers that must not block use a pool instead.
  virtual bool async_writes() const { return false; }
  virtual void SendMessagesAsync(int64_t queue_id, std::vector<NewMessage> messages, TimeMs now,
                                 TimeMs dedup_window_ms,
                                 std::function<void(Result<std::vector<SentMessage>>)> done) {
    done(SendMessages(queue_id, messages, now, dedup_window_ms));
  }
  virtual void ReceiveMessagesAsync(
      const ReceiveOptions& options, TimeMs now,
      std::function<void(Result<std::vector<ReceivedMessage>>)> done) {
    done(ReceiveMessages(options, now));
  }
  virtual void DeleteMessagesAsync(int64_t queue_id, std::vector<Receipt> receipts,
                                   std::function<void(Result<std::vector<Status>>)> done) {
    done(DeleteMessages(queue_id, receipts));
  }

  // Deletes every message in the queue; returns how many. kNotFound if the queue is absent.
  virtual Result<int64_t> PurgeQueue(int64_t queue_id) = 0;
  virtual Result<QueueCounts> CountMessages(int64_t queue_id, TimeMs now) = 0;

  // Moves up to `limit` visible messages, oldest first, out of dead-letter queue
  // `from_queue_id`: to `to_queue_id`, or when it is 0 to the queue each message was
  // dead-lettered from. Moved messages are visible at once, with their receive count and first
  // receive time reset and their retention restarted from the target queue's setting. Messages
  // whose source queue no longer exists stay where they are. kNotFound if `from_queue_id` or a
  // non-zero `to_queue_id` does not exist. Returns how many moved.
  virtual Result<int64_t> RedriveMessages(int64_t from_queue_id, int64_t to_queue_id, TimeMs now,
                                          int64_t limit) = 0;

  // Deletes messages whose retention ended at or before `now` and forgets expired deduplication
  // ids. Returns how many messages were deleted.
  virtual Result<int64_t> DeleteExpired(TimeMs now) = 0;
};

// Buckets, objects' metadata, and the blobs whose content may be on disk without an object
// referring to it (see PendingBlob). Object keys are compared as bytes.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;

  // Assigns bucket.id. kAlreadyExists if the project has a bucket of that name.
  virtual Result<Bucket> CreateBucket(Bucket bucket) = 0;
  virtual Result<Bucket> GetBucket(const std::string& project_id, const std::string& name) = 0;
  // A project's buckets, by name.
  virtual Result<std::vector<Bucket>> ListBuckets(const std::string& project_id) = 0;
  // kNotFound if absent; kFailedPrecondition if it holds objects.
  virtual Status DeleteBucket(int64_t bucket_id) = 0;

  // Records a blob about to be written. kAlreadyExists if the id is already pending.
  virtual Status AddPendingBlob(const PendingBlob& blob) = 0;
  // The pending blobs of `owner`, oldest first.
  virtual Result<std::vector<PendingBlob>> ListPendingBlobs(const std::string& owner) = 0;
  // Forgets a pending blob once its content is gone. OK if it was not pending.
  virtual Status RemovePendingBlob(const std::string& blob_id) = 0;

  // Multipart uploads in progress, kept until completed or aborted. A part's blob stays a
  // pending blob from before its first byte is written, but ListPendingBlobs leaves out the
  // blobs a stored part refers to: a part written whole and recorded survives a restart; one
  // cut short, or replaced, or of a removed upload, is reclaimed with every other pending blob.
  //
  // Records a new upload (its `parts` are ignored). kAlreadyExists if the id is taken.
  virtual Status AddMultipartUpload(const MultipartUploadRecord& upload) = 0;
  // Records a part, replacing the upload's part of that number; returns the replaced part's
  // blob id ("" if none), which is then a pending blob like any other. kNotFound if the upload
  // does not exist.
  virtual Result<std::string> PutMultipartPart(const MultipartPartRecord& part) = 0;
  // The uploads whose parts `owner` holds, each with its parts by number.
  virtual Result<std::vector<MultipartUploadRecord>> ListMultipartUploads(
      const std::string& owner) = 0;
  // Forgets an upload and its parts (their blobs are pending blobs again). OK if absent.
  virtual Status RemoveMultipartUpload(const std::string& upload_id) = 0;

  // In one transaction: creates the object (object.bucket_id, object.key) or replaces the one
  // there, and forgets as pending the blob object.blob_id, or, for an object kept as segments
  // (blob_id ""), every segment's blob. A replaced object's blobs (its one blob, or all its
  // segments' blobs) become pending blobs of `owner` (created at object.modified_at) and their
  // ids are returned, for the caller to delete their content and then RemovePendingBlob; none
  // when nothing was replaced. Readers see the old object or the new one, never a mix.
  // kNotFound if the bucket does not exist (it may have been deleted during the upload);
  // kInvalidArgument for a record with both a blob_id and segments, or neither;
  // kFailedPrecondition, changing nothing, if `condition` does not hold (the message says why:
  // "... already exists", "... does not exist", or "... has ETag ...").
  virtual Result<std::vector<std::string>> PutObject(const ObjectRecord& object,
                                                     const std::string& owner,
                                                     const PutCondition& condition = {}) = 0;
  // PutObject completing multipart upload `upload_id`: in the same transaction the upload and
  // its parts are forgotten, so that an upload makes its object at most once, even across a
  // crash. The parts' blobs that the object's segments name become the object's; the others
  // are pending blobs again, for the caller to remove. kNotFound, changing nothing, if the
  // upload does not exist (it was completed or aborted) or the bucket does not;
  // kFailedPrecondition, changing nothing, if `condition` does not hold (as for PutObject).
  virtual Result<std::vector<std::string>> PutObjectCompletingUpload(
      const ObjectRecord& object, const std::string& owner, const std::string& upload_id,
      const PutCondition& condition = {}) = 0;
  // The object's record, with its segments when it is kept as segments. kNotFound if there is
  // no such object.
  virtual Result<ObjectRecord> GetObject(int64_t bucket_id, const std::string& key) = 0;
  // Keys in order, from after options.start_after, that start with options.prefix. With a
  // delimiter, a key whose remainder after the prefix contains it is listed once as a common
  // prefix (the key up to and including the delimiter's first occurrence there) instead, and a
  // start_after that is such a common prefix skips every key under it, so next_start_after
  // always continues where a listing stopped. kInvalidArgument if limit < 1.
  virtual Result<ObjectListing> ListObjects(int64_t bucket_id,
                                            const ListObjectsOptions& options) = 0;
  // In one transaction: deletes the object and makes its blobs (its one blob, or all its
  // segments' blobs) pending blobs of `owner` (created at `now`); returns their ids. kNotFound
  // if there is no such object; kFailedPrecondition, changing nothing, if `if_match` names an
  // ETag ("" for no condition, "*" for any) that the object does not have (the message says
  // which it has).
  virtual Result<std::vector<std::string>> DeleteObject(int64_t bucket_id, const std::string& key,
                                                        const std::string& owner, TimeMs now,
                                                        const std::string& if_match = "") = 0;
};

// Machines of the fleet. Nodes are shared by every project.
class NodeStore {
 public:
  virtual ~NodeStore() = default;
  // Creates the node or replaces what is known of it, sets state "ready", clears any drain and
  // increments its epoch (1 for a new node). Returns the stored record.
  virtual Result<NodeRecord> RegisterNode(NodeRecord node) = 0;
  // RegisterNode, with what let the registration in, in one transaction. With a join token:
  // kAlreadyExists if the node is registered (a join token only makes new nodes), kNotFound if
  // the token does not exist, kFailedPrecondition (saying why) if it is revoked, expired at
  // `node.registered_at` or used up; otherwise one of its uses is spent. The credential's hash,
  // when given, becomes the node's (FindNodeByCredential).
  virtual Result<NodeRecord> AdmitNode(NodeRecord node, const NodeAdmission& admission) = 0;
  virtual Result<NodeRecord> GetNode(const std::string& id) = 0;  // kNotFound
  virtual Result<std::vector<NodeRecord>> ListNodes() = 0;        // by id
  // Records a heartbeat. kNotFound if the node is unknown; kAborted if `epoch` is not the
  // node's current epoch (another registration took over). A lost node stays lost.
  virtual Status TouchNode(const std::string& id, int64_t epoch, TimeMs now) = 0;
  // Sets the state and the drain document ("" to clear). kNotFound if unknown.
  virtual Status SetNodeState(const std::string& id, const std::string& state,
                              const std::string& drain_json) = 0;
  // The same, only if the node's state is still `from`: kFailedPrecondition (naming the state
  // it has) if not, kNotFound if unknown.
  virtual Status ChangeNodeState(const std::string& id, const std::string& from,
                                 const std::string& state, const std::string& drain_json) = 0;
  // Forgets a lost node (its periods stay, for metering): kFailedPrecondition (naming its state)
  // if it is not lost, which a worker registering again meanwhile makes it; kNotFound if unknown.
  virtual Status DeleteLostNode(const std::string& id) = 0;
  // The periods nodes were up (RegisterNode opens one per epoch, at registered_at with the
  // registered info; TouchNode moves its last_seen_at forward) that overlap [since, until):
  // last_seen_at >= since and started_at < until. By node, then epoch.
  virtual Result<std::vector<NodePeriod>> ListNodePeriods(TimeMs since, TimeMs until) = 0;
  // Moves the start of period (`id`, `epoch`) back to `started_at` (never forward): a pool's
  // machine is paid for from when it was asked for, not from when its worker registered.
  // kNotFound if there is no such period.
  virtual Status BackdateNodePeriod(const std::string& id, int64_t epoch, TimeMs started_at) = 0;
};

// Managed jobs, their events and metrics.
class JobStore {
 public:
  virtual ~JobStore() = default;
  // Stores the job (job.version must be 1) and its first event. kAlreadyExists for a used id.
  virtual Status CreateJob(const JobRecord& job, const JobEvent& first) = 0;
  virtual Result<JobRecord> GetJob(const std::string& id) = 0;  // kNotFound
  // Jobs of a project ("" = every project) in any of `states` (empty = every state), oldest
  // first, at most `limit`.
  virtual Result<std::vector<JobRecord>> ListJobs(const std::string& project_id,
                                                  const std::vector<std::string>& states,
                                                  int limit) = 0;
  // In one transaction: replaces the job if its stored version is still `expected_version`
  // (job.version must be expected_version + 1) and appends `events`. kAborted if the version
  // moved on (reread and decide again); kNotFound if the job does not exist.
  virtual Status UpdateJob(const JobRecord& job, int64_t expected_version,
                           const std::vector<JobEvent>& events) = 0;
  // Events of a job after `after_seq`, in order.
  virtual Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id,
                                                      int64_t after_seq) = 0;
  virtual Status AddMetrics(const std::vector<MetricPoint>& points) = 0;
  // A job's metric points in the order they were added, at most `limit` (the latest ones).
  virtual Result<std::vector<MetricPoint>> ListMetrics(const std::string& job_id, int limit) = 0;
};

// S3 access keys, each bound to one project.
class AccessKeyStore {
 public:
  virtual ~AccessKeyStore() = default;
  // kAlreadyExists if a key has this id.
  virtual Status CreateAccessKey(const AccessKey& key) = 0;
  // kNotFound if no key has this id. A revoked key is returned with revoked_at set.
  virtual Result<AccessKey> FindAccessKey(const std::string& id) = 0;
  // The keys of a project ("" = every project's), in the order they were made.
  virtual Result<std::vector<AccessKey>> ListAccessKeys(const std::string& project_id) = 0;
  // kNotFound if there is no such key; revoking twice keeps the first time.
  virtual Status RevokeAccessKey(const std::string& id, TimeMs now) = 0;
};

// Budgets and the alerts they fired.
class BudgetStore {
 public:
  virtual ~BudgetStore() = default;
  // Assigns nothing: budget.id is chosen by the caller. kAlreadyExists if the project has a
  // budget of that name.
  virtual Status CreateBudget(const BudgetRecord& budget) = 0;
  // Replaces doc_json and updated_at of the budget with budget.id. kNotFound if unknown.
  virtual Status UpdateBudget(const BudgetRecord& budget) = 0;
  virtual Result<BudgetRecord> GetBudget(const std::string& project_id,
                                         const std::string& name) = 0;  // kNotFound
  // A project's budgets ("" = every project's), by project then name.
  virtual Result<std::vector<BudgetRecord>> ListBudgets(const std::string& project_id) = 0;
  // Deletes the budget and its alerts. kNotFound if unknown.
  virtual Status DeleteBudget(const std::string& id) = 0;
  // Records the alert (assigning seq) unless one with the same budget, period_start, kind and
  // threshold exists. True if recorded now, false if it had already fired.
  virtual Result<bool> AddBudgetAlert(const BudgetAlert& alert) = 0;
  // Alerts of a project ("" = every project's) with seq > after_seq, oldest first, at most
  // `limit`.
  virtual Result<std::vector<BudgetAlert>> ListBudgetAlerts(const std::string& project_id,
                                                            int64_t after_seq, int limit) = 0;
  // Alerts whose next_delivery_at is set and <= now, oldest (lowest seq) first, at most `limit`.
  virtual Result<std::vector<BudgetAlert>> DueBudgetAlerts(TimeMs now, int limit) = 0;
  // Records the outcome of a delivery: delivery_attempts, delivered_at, next_delivery_at and
  // last_error are written from `alert` (found by seq). kNotFound if unknown.
  virtual Status UpdateBudgetAlertDelivery(const BudgetAlert& alert) = 0;
};

// Datasets' indexes: which shards make each dataset. Datasets are per project, like buckets.
class DatasetStore {
 public:
  virtual ~DatasetStore() = default;
  // In one transaction: the dataset and all its shards, so that a dataset is seen whole or not
  // at all. kAlreadyExists if the project has a dataset of that name (or the id is taken).
  virtual Status CreateDataset(const DatasetRecord& dataset,
                               const std::vector<DatasetShardRecord>& shards) = 0;
  virtual Result<DatasetRecord> GetDataset(const std::string& project_id,
                                           const std::string& name) = 0;  // kNotFound
  // A project's datasets, by name.
  virtual Result<std::vector<DatasetRecord>> ListDatasets(const std::string& project_id) = 0;
  // A dataset's shards, by ordinal (none for an unknown id).
  virtual Result<std::vector<DatasetShardRecord>> ListDatasetShards(
      const std::string& dataset_id) = 0;
  // In one transaction: forgets the dataset and its shards, and returns the shards (whose
  // objects the caller then deletes). kNotFound if there is no such dataset.
  virtual Result<std::vector<DatasetShardRecord>> DeleteDataset(const std::string& id) = 0;
};

// Inference endpoints, each of one project.
class EndpointStore {
 public:
  virtual ~EndpointStore() = default;
  // Stores the endpoint (version 1). kAlreadyExists if its project has one of that name.
  virtual Status CreateEndpoint(const EndpointRecord& endpoint) = 0;
  // kNotFound if the project has no endpoint of that name.
  virtual Result<EndpointRecord> GetEndpoint(const std::string& project_id,
                                             const std::string& name) = 0;
  // The endpoints of a project ("" = every project's), by project and name.
  virtual Result<std::vector<EndpointRecord>> ListEndpoints(const std::string& project_id) = 0;
  // Replaces the endpoint if its stored version is still `expected_version` (endpoint.version
  // must be expected_version + 1). kAborted if the version moved on; kNotFound if it is gone.
  virtual Status UpdateEndpoint(const EndpointRecord& endpoint, int64_t expected_version) = 0;
  // Forgets the endpoint if its version is still `expected_version`: kAborted, kNotFound as
  // UpdateEndpoint.
  virtual Status DeleteEndpoint(const std::string& id, int64_t expected_version) = 0;

  // Replaces what server `server_id` published of endpoints' load with `loads` (its rows not
  // among them are dropped), and forgets every server's rows last updated before
  // `forget_before` (servers that stopped without saying so).
  virtual Status PublishEndpointLoads(const std::string& server_id,
                                      const std::vector<EndpointLoadRecord>& loads,
                                      TimeMs forget_before) = 0;
  // Every server's rows updated at or after `since`, by server and endpoint.
  virtual Result<std::vector<EndpointLoadRecord>> ListEndpointLoads(TimeMs since) = 0;

  // Adds (or replaces, by server, endpoint and interval) what servers' gateways answered in
  // closed intervals, and forgets every row of an interval that began before `forget_before`.
  virtual Status AddEndpointTraffic(const std::vector<EndpointTrafficRecord>& rows,
                                    TimeMs forget_before) = 0;
  // An endpoint's rows of intervals that began at or after `since`, by server and interval.
  virtual Result<std::vector<EndpointTrafficRecord>> ListEndpointTraffic(
      const std::string& endpoint_id, TimeMs since) = 0;
};

// Versioned documents of projects (DocumentRecord), by kind.
class DocumentStore {
 public:
  virtual ~DocumentStore() = default;
  // Stores the document (version 1). kAlreadyExists "<kind> '<name>' exists" if its project
  // has one of that kind and name.
  virtual Status CreateDocument(const DocumentRecord& doc) = 0;
  // kNotFound "<kind> '<name>' does not exist" if the project has none of that kind and name.
  virtual Result<DocumentRecord> GetDocument(const std::string& kind, const std::string& project_id,
                                             const std::string& name) = 0;
  // The documents of a kind of a project ("" = every project's), by project and name.
  // `states`: only those in one of these states (empty: every state).
  virtual Result<std::vector<DocumentRecord>> ListDocuments(
      const std::string& kind, const std::string& project_id,
      const std::vector<std::string>& states = {}) = 0;
  // Replaces state, updated_at and doc if the stored version is still `expected_version` (it
  // becomes expected_version + 1). kAborted if the version moved on; kNotFound if it is gone.
  virtual Status UpdateDocument(const DocumentRecord& doc, int64_t expected_version) = 0;
  // Forgets the document if its version is still `expected_version`: kAborted, kNotFound as
  // UpdateDocument.
  virtual Status DeleteDocument(const std::string& id, int64_t expected_version) = 0;
};

// Node pools (pools/), of the whole fleet.
class PoolStore {
 public:
  virtual ~PoolStore() = default;
  // Stores the pool (its version must be 1). kAlreadyExists if one has that name.
  virtual Status CreatePool(const PoolRecord& pool) = 0;
  virtual Result<PoolRecord> GetPool(const std::string& name) = 0;  // kNotFound
  virtual Result<std::vector<PoolRecord>> ListPools() = 0;          // by name
  // Replaces the spec if the stored version is still `expected_version` (it becomes
  // expected_version + 1). kAborted if the version moved on; kNotFound if the pool is gone.
  virtual Status UpdatePoolSpec(const std::string& name, const std::string& spec_json,
                                TimeMs updated_at, int64_t expected_version) = 0;
  // The controller's view of the pool; the spec and its version are untouched. kNotFound.
  virtual Status SetPoolStatus(const std::string& name, const std::string& status_json) = 0;
  virtual Status DeletePool(const std::string& name) = 0;  // kNotFound
};

class Store {
 public:
  virtual ~Store() = default;
  virtual AuthStore& auth() = 0;
  virtual QueueStore& queues() = 0;
  virtual ObjectStore& objects() = 0;
  virtual NodeStore& nodes() = 0;
  virtual JobStore& jobs() = 0;
  virtual AccessKeyStore& access_keys() = 0;
  virtual BudgetStore& budgets() = 0;
  virtual DatasetStore& datasets() = 0;
  virtual EndpointStore& endpoints() = 0;
  virtual PoolStore& pools() = 0;
  virtual DocumentStore& documents() = 0;

  // Called with a queue id after messages may have become visible in it (a send, a redrive, a
  // visibility change), from any thread and, for PostgreSQL, for changes made by other servers
  // too. Used to wake long polls. Set once, before concurrent use.
  virtual void SetQueueListener(std::function<void(int64_t queue_id)> listener) = 0;

  // A handle on the lead among the servers sharing this store (store/leadership.h), one per
  // server, kept for its life: SQLite's always leads; PostgreSQL's takes the leader lock on a
  // connection of its own, opened by its first TryAcquire.
  virtual std::unique_ptr<Leadership> NewLeadership() = 0;

  // "sqlite" or "postgresql".
  virtual std::string backend() const = 0;
  // The schema version after migrations.
  virtual int schema_version() const = 0;
};

// Opens (creating and migrating as needed) the store named by `url`:
//   sqlite:/path/to/tensorfleet.db      or a plain file path
//   postgresql://user@host:port/dbname  (also postgres://, or "host=... dbname=..." keywords)
Result<std::unique_ptr<Store>> OpenStore(const std::string& url);

}  // namespace tf::store
