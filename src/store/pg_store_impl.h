// Private to the PostgreSQL back end: the class behind OpenPostgresStore. Its methods are spread
// over pg_auth.cc, pg_queues.cc, pg_send.cc, pg_receive.cc, pg_receipts.cc, pg_objects.cc,
// pg_nodes.cc, pg_jobs.cc, pg_access_keys.cc, pg_budgets.cc and pg_datasets.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/pg_listener.h"
#include "store/pg_pool.h"
#include "store/store.h"

namespace tf::store {

class PostgresStore final : public Store,
                            public AuthStore,
                            public QueueStore,
                            public ObjectStore,
                            public NodeStore,
                            public JobStore,
                            public AccessKeyStore,
                            public BudgetStore,
                            public DatasetStore,
                            public EndpointStore,
                            public PoolStore,
                            public DocumentStore {
 public:
  PostgresStore(std::unique_ptr<PgPool> pool, int schema_version)
      : pool_(std::move(pool)), schema_version_(schema_version) {}
  ~PostgresStore() override;

  AuthStore& auth() override { return *this; }
  QueueStore& queues() override { return *this; }
  ObjectStore& objects() override { return *this; }
  NodeStore& nodes() override { return *this; }
  JobStore& jobs() override { return *this; }
  AccessKeyStore& access_keys() override { return *this; }
  BudgetStore& budgets() override { return *this; }
  EndpointStore& endpoints() override { return *this; }
  PoolStore& pools() override { return *this; }
  DocumentStore& documents() override { return *this; }
  DatasetStore& datasets() override { return *this; }
  void SetQueueListener(std::function<void(int64_t)> listener) override;
  std::unique_ptr<Leadership> NewLeadership() override;  // pg_leadership.cc
  std::string backend() const override { return "postgresql"; }
  int schema_version() const override { return schema_version_; }

  // AuthStore (pg_auth.cc)
  Status CreateProject(const Project& project) override;
  Result<Project> GetProject(const std::string& id) override;
  Result<Project> GetProjectByName(const std::string& name) override;
  Result<std::vector<Project>> ListProjects() override;
  Status CreateToken(const Token& token) override;
  Result<Token> FindTokenByHash(const std::string& hash) override;
  Result<std::vector<Token>> ListTokens(const std::string& project_id) override;
  Status RevokeToken(const std::string& id, TimeMs now) override;
  // (pg_node_access.cc)
  Status CreateJoinToken(const JoinToken& token) override;
  Result<JoinToken> FindJoinTokenByHash(const std::string& hash) override;
  Result<std::vector<JoinToken>> ListJoinTokens() override;
  Status RevokeJoinToken(const std::string& id, TimeMs now) override;
  Result<int64_t> DeleteJoinTokensExpiredBefore(TimeMs before) override;
  Result<std::string> FindNodeByCredential(const std::string& hash) override;

  // QueueStore: queue records, counts and bulk operations (pg_queues.cc)
  Result<Queue> CreateQueue(Queue queue) override;
  Result<Queue> GetQueue(const std::string& project_id, const std::string& name) override;
  Result<Queue> GetQueueById(int64_t id) override;
  Result<std::vector<Queue>> ListQueues(const std::string& project_id,
                                        const std::string& prefix) override;
  Status UpdateQueueConfig(int64_t id, const QueueConfig& config, TimeMs now) override;
  Status DeleteQueue(int64_t id) override;
  Result<int64_t> PurgeQueue(int64_t queue_id) override;
  Result<QueueCounts> CountMessages(int64_t queue_id, TimeMs now) override;
  Result<int64_t> RedriveMessages(int64_t from_queue_id, int64_t to_queue_id, TimeMs now,
                                  int64_t limit) override;
  Result<int64_t> DeleteExpired(TimeMs now) override;

  // QueueStore: messages (pg_send.cc, pg_receive.cc, pg_receipts.cc)
  Result<std::vector<SentMessage>> SendMessages(int64_t queue_id,
                                                const std::vector<NewMessage>& messages, TimeMs now,
                                                TimeMs dedup_window_ms) override;
  Result<std::vector<ReceivedMessage>> ReceiveMessages(const ReceiveOptions& options,
                                                       TimeMs now) override;
  Result<std::vector<Status>> DeleteMessages(int64_t queue_id,
                                             const std::vector<Receipt>& receipts) override;
  Result<std::vector<Status>> ChangeVisibility(int64_t queue_id,
                                               const std::vector<VisibilityChange>& changes,
                                               TimeMs now) override;

  // ObjectStore (pg_objects.cc)
  Result<Bucket> CreateBucket(Bucket bucket) override;
  Result<Bucket> GetBucket(const std::string& project_id, const std::string& name) override;
  Result<std::vector<Bucket>> ListBuckets(const std::string& project_id) override;
  Status DeleteBucket(int64_t bucket_id) override;
  Status AddPendingBlob(const PendingBlob& blob) override;
  Result<std::vector<PendingBlob>> ListPendingBlobs(const std::string& owner) override;
  Status RemovePendingBlob(const std::string& blob_id) override;
  Status AddMultipartUpload(const MultipartUploadRecord& upload) override;
  Result<std::string> PutMultipartPart(const MultipartPartRecord& part) override;
  Result<std::vector<MultipartUploadRecord>> ListMultipartUploads(
      const std::string& owner) override;
  Status RemoveMultipartUpload(const std::string& upload_id) override;
  Result<std::vector<std::string>> PutObject(const ObjectRecord& object, const std::string& owner,
                                             const PutCondition& condition = {}) override;
  Result<std::vector<std::string>> PutObjectCompletingUpload(
      const ObjectRecord& object, const std::string& owner, const std::string& upload_id,
      const PutCondition& condition = {}) override;
  Result<ObjectRecord> GetObject(int64_t bucket_id, const std::string& key) override;
  Result<ObjectListing> ListObjects(int64_t bucket_id, const ListObjectsOptions& options) override;
  Result<std::vector<std::string>> DeleteObject(int64_t bucket_id, const std::string& key,
                                                const std::string& owner, TimeMs now,
                                                const std::string& if_match = "") override;

  // NodeStore (pg_nodes.cc)
  Result<NodeRecord> RegisterNode(NodeRecord node) override;
  Result<NodeRecord> AdmitNode(NodeRecord node, const NodeAdmission& admission) override;
  Result<NodeRecord> GetNode(const std::string& id) override;
  Result<std::vector<NodeRecord>> ListNodes() override;
  Status TouchNode(const std::string& id, int64_t epoch, TimeMs now) override;
  Status SetNodeState(const std::string& id, const std::string& state,
                      const std::string& drain_json) override;
  Status ChangeNodeState(const std::string& id, const std::string& from, const std::string& state,
                         const std::string& drain_json) override;
  Status DeleteLostNode(const std::string& id) override;
  Result<std::vector<NodePeriod>> ListNodePeriods(TimeMs since, TimeMs until) override;
  Status BackdateNodePeriod(const std::string& id, int64_t epoch, TimeMs started_at) override;

  // JobStore (pg_jobs.cc)
  Status CreateJob(const JobRecord& job, const JobEvent& first) override;
  Result<JobRecord> GetJob(const std::string& id) override;
  Result<std::vector<JobRecord>> ListJobs(const std::string& project_id,
                                          const std::vector<std::string>& states,
                                          int limit) override;
  Status UpdateJob(const JobRecord& job, int64_t expected_version,
                   const std::vector<JobEvent>& events) override;
  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id,
                                              int64_t after_seq) override;
  Status AddMetrics(const std::vector<MetricPoint>& points) override;
  Result<std::vector<MetricPoint>> ListMetrics(const std::string& job_id, int limit) override;

  // AccessKeyStore (pg_access_keys.cc)
  Status CreateAccessKey(const AccessKey& key) override;
  Result<AccessKey> FindAccessKey(const std::string& id) override;
  Result<std::vector<AccessKey>> ListAccessKeys(const std::string& project_id) override;
  Status RevokeAccessKey(const std::string& id, TimeMs now) override;

  // DocumentStore (pg_documents.cc)
  Status CreateDocument(const DocumentRecord& doc) override;
  Result<DocumentRecord> GetDocument(const std::string& kind, const std::string& project_id,
                                     const std::string& name) override;
  Result<std::vector<DocumentRecord>> ListDocuments(
      const std::string& kind, const std::string& project_id,
      const std::vector<std::string>& states) override;
  Status UpdateDocument(const DocumentRecord& doc, int64_t expected_version) override;
  Status DeleteDocument(const std::string& id, int64_t expected_version) override;

  // EndpointStore (pg_endpoints.cc)
  Status CreateEndpoint(const EndpointRecord& endpoint) override;
  Result<EndpointRecord> GetEndpoint(const std::string& project_id,
                                     const std::string& name) override;
  Result<std::vector<EndpointRecord>> ListEndpoints(const std::string& project_id) override;
  Status UpdateEndpoint(const EndpointRecord& endpoint, int64_t expected_version) override;
  Status DeleteEndpoint(const std::string& id, int64_t expected_version) override;
  Status PublishEndpointLoads(const std::string& server_id,
                              const std::vector<EndpointLoadRecord>& loads,
                              TimeMs forget_before) override;
  Result<std::vector<EndpointLoadRecord>> ListEndpointLoads(TimeMs since) override;
  Status AddEndpointTraffic(const std::vector<EndpointTrafficRecord>& rows,
                            TimeMs forget_before) override;
  Result<std::vector<EndpointTrafficRecord>> ListEndpointTraffic(const std::string& endpoint_id,
                                                                 TimeMs since) override;

  // PoolStore (pg_pools.cc)
  Status CreatePool(const PoolRecord& pool) override;
  Result<PoolRecord> GetPool(const std::string& name) override;
  Result<std::vector<PoolRecord>> ListPools() override;
  Status UpdatePoolSpec(const std::string& name, const std::string& spec_json, TimeMs updated_at,
                        int64_t expected_version) override;
  Status SetPoolStatus(const std::string& name, const std::string& status_json) override;
  Status DeletePool(const std::string& name) override;

  // BudgetStore (pg_budgets.cc)
  Status CreateBudget(const BudgetRecord& budget) override;
  Status UpdateBudget(const BudgetRecord& budget) override;
  Result<BudgetRecord> GetBudget(const std::string& project_id, const std::string& name) override;
  Result<std::vector<BudgetRecord>> ListBudgets(const std::string& project_id) override;
  Status DeleteBudget(const std::string& id) override;
  Result<bool> AddBudgetAlert(const BudgetAlert& alert) override;
  Result<std::vector<BudgetAlert>> ListBudgetAlerts(const std::string& project_id,
                                                    int64_t after_seq, int limit) override;
  Result<std::vector<BudgetAlert>> DueBudgetAlerts(TimeMs now, int limit) override;
  Status UpdateBudgetAlertDelivery(const BudgetAlert& alert) override;

  // DatasetStore (pg_datasets.cc)
  Status CreateDataset(const DatasetRecord& dataset,
                       const std::vector<DatasetShardRecord>& shards) override;
  Result<DatasetRecord> GetDataset(const std::string& project_id, const std::string& name) override;
  Result<std::vector<DatasetRecord>> ListDatasets(const std::string& project_id) override;
  Result<std::vector<DatasetShardRecord>> ListDatasetShards(const std::string& dataset_id) override;
  Result<std::vector<DatasetShardRecord>> DeleteDataset(const std::string& id) override;

 private:
  // Tells this server's listener, after a commit, that messages may have become visible.
  void NotifyLocal(int64_t queue_id) const {
    if (listener_) listener_(queue_id);
  }

  std::unique_ptr<PgPool> pool_;
  const int schema_version_;
  std::function<void(int64_t)> listener_;
  // Declared last: its thread stops before the pool it consults goes away.
  std::unique_ptr<PgQueueListener> queue_listener_;
};

// Within a transaction: tells every server's listener, once the transaction commits, that
// messages may have become visible in each of `queue_ids` (pg_notify on kQueueChannel).
Status NotifyQueues(PgConnection& conn, const std::vector<int64_t>& queue_ids);

// Within a transaction: serialises, until it ends, the sends and receives of FIFO queue
// `queue_id`, so that sequence numbers are handed out in commit order and two receivers never
// take messages of the same group at once.
Status LockFifoQueue(PgConnection& conn, int64_t queue_id);

// A message's receipt as stored: the uint64 reinterpreted as BIGINT, and back.
inline int64_t ReceiptToDb(uint64_t receipt) { return static_cast<int64_t>(receipt); }
inline uint64_t ReceiptFromDb(int64_t stored) { return static_cast<uint64_t>(stored); }

}  // namespace tf::store
