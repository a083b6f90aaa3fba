// PostgresStore's BudgetStore: budgets and the alerts they fired.
#include <cstdio>
#include <cstdlib>

#include "store/pg_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kBudgetColumns =
    "SELECT id, project_id, name, doc, created_at, updated_at FROM budgets ";

// Doubles cross as text: PostgreSQL prints the shortest text that reads back the same double.
constexpr const char* kAlertColumns =
    "SELECT seq, budget_id, project_id, period_start, kind, threshold::text, fired_at, "
    "spend::text, amount::text, message, next_delivery_at, delivery_attempts, delivered_at, "
    "last_error FROM budget_alerts ";

std::string FormatReal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double ReadReal(const PgResult& r, int row, int column) {
  return std::strtod(std::string(r.Text(row, column)).c_str(), nullptr);
}

BudgetRecord ReadBudget(const PgResult& r, int row) {
  BudgetRecord b;
  b.id = r.Text(row, 0);
  b.project_id = r.Text(row, 1);
  b.name = r.Text(row, 2);
  b.doc_json = r.Text(row, 3);
  b.created_at = r.Int(row, 4);
  b.updated_at = r.Int(row, 5);
  return b;
}

BudgetAlert ReadAlert(const PgResult& r, int row) {
  BudgetAlert a;
  a.seq = r.Int(row, 0);
  a.budget_id = r.Text(row, 1);
  a.project_id = r.Text(row, 2);
  a.period_start = r.Int(row, 3);
  a.kind = r.Text(row, 4);
  a.threshold = ReadReal(r, row, 5);
  a.fired_at = r.Int(row, 6);
  a.spend = ReadReal(r, row, 7);
  a.amount = ReadReal(r, row, 8);
  a.message = r.Text(row, 9);
  if (!r.IsNull(row, 10)) a.next_delivery_at = r.Int(row, 10);
  a.delivery_attempts = static_cast<int>(r.Int(row, 11));
  if (!r.IsNull(row, 12)) a.delivered_at = r.Int(row, 12);
  a.last_error = r.Text(row, 13);
  return a;
}

PgParams& AddOptional(PgParams& params, const std::optional<TimeMs>& value) {
  return value ? params.Add(*value) : params.AddNull();
}

}  // namespace

Status PostgresStore::CreateBudget(const BudgetRecord& b) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO budgets (id, project_id, name, doc, created_at, updated_at) "
                  "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING 1",
                  PgParams()
                      .Add(b.id)
                      .Add(b.project_id)
                      .Add(b.name)
                      .Add(b.doc_json)
                      .Add(b.created_at)
                      .Add(b.updated_at)));
    if (r.rows() == 1) return OkStatus();
    TF_ASSIGN_OR_RETURN(PgResult named,
                        conn.Exec("SELECT 1 FROM budgets WHERE project_id = $1 AND name = $2",
                                  PgParams().Add(b.project_id).Add(b.name)));
    if (named.rows() > 0) {
      return AlreadyExists("budget '" + b.name + "' already exists in project " + b.project_id);
    }
    return AlreadyExists("budget " + b.id + " already exists");
  });
}

Status PostgresStore::UpdateBudget(const BudgetRecord& b) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE budgets SET doc = $2, updated_at = $3 WHERE id = $1",
                                  PgParams().Add(b.id).Add(b.doc_json).Add(b.updated_at)));
    if (r.affected() == 0) return NotFound("budget " + b.id + " does not exist");
    return OkStatus();
  });
}

Result<BudgetRecord> PostgresStore::GetBudget(const std::string& project_id,
                                              const std::string& name) {
  BudgetRecord out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kBudgetColumns) + "WHERE project_id = $1 AND name = $2",
                              PgParams().Add(project_id).Add(name)));
    if (r.rows() == 0) {
      return NotFound("budget '" + name + "' does not exist in project " + project_id);
    }
    out = ReadBudget(r, 0);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<BudgetRecord>> PostgresStore::ListBudgets(const std::string& project_id) {
  std::vector<BudgetRecord> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r, conn.Exec(std::string(kBudgetColumns) +
                                                  "WHERE $1::text = '' OR project_id = $1 "
                                                  "ORDER BY project_id, name",
                                              PgParams().Add(project_id)));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadBudget(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::DeleteBudget(const std::string& id) {
  return pool_->Run(PgTxMode::kTransaction, [&](PgConnection& conn) -> Status {
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("DELETE FROM budgets WHERE id = $1", PgParams().Add(id)));
    if (r.affected() == 0) return NotFound("budget " + id + " does not exist");
    return conn.Run("DELETE FROM budget_alerts WHERE budget_id = $1", PgParams().Add(id));
  });
}

Result<bool> PostgresStore::AddBudgetAlert(const BudgetAlert& a) {
  bool added = false;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    PgParams params;
    params.Add(a.budget_id)
        .Add(a.project_id)
        .Add(a.period_start)
        .Add(a.kind)
        .Add(FormatReal(a.threshold))
        .Add(a.fired_at)
        .Add(FormatReal(a.spend))
        .Add(FormatReal(a.amount))
        .Add(a.message);
    AddOptional(params, a.next_delivery_at).Add(static_cast<int64_t>(a.delivery_attempts));
    AddOptional(params, a.delivered_at).Add(a.last_error);
    // One statement: of callers racing to record the same alert, exactly one inserts it.
    TF_ASSIGN_OR_RETURN(
        PgResult r,
        conn.Exec("INSERT INTO budget_alerts (budget_id, project_id, period_start, kind, "
                  "threshold, fired_at, spend, amount, message, next_delivery_at, "
                  "delivery_attempts, delivered_at, last_error) "
                  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) "
                  "ON CONFLICT (budget_id, period_start, kind, threshold) DO NOTHING "
                  "RETURNING seq",
                  params));
    added = r.rows() == 1;
    return OkStatus();
  }));
  return added;
}

Result<std::vector<BudgetAlert>> PostgresStore::ListBudgetAlerts(const std::string& project_id,
                                                                 int64_t after_seq, int limit) {
  std::vector<BudgetAlert> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec(std::string(kAlertColumns) +
                                      "WHERE ($1::text = '' OR project_id = $1) AND seq > $2 "
                                      "ORDER BY seq LIMIT $3",
                                  PgParams().Add(project_id).Add(after_seq).Add(int64_t{limit})));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadAlert(r, i));
    return OkStatus();
  }));
  return out;
}

Result<std::vector<BudgetAlert>> PostgresStore::DueBudgetAlerts(TimeMs now, int limit) {
  std::vector<BudgetAlert> out;
  TF_RETURN_IF_ERROR(pool_->Run(PgTxMode::kRead, [&](PgConnection& conn) -> Status {
    out.clear();
    TF_ASSIGN_OR_RETURN(
        PgResult r, conn.Exec(std::string(kAlertColumns) +
                                  "WHERE next_delivery_at IS NOT NULL AND next_delivery_at <= $1 "
                                  "ORDER BY seq LIMIT $2",
                              PgParams().Add(now).Add(int64_t{limit})));
    for (int i = 0; i < r.rows(); ++i) out.push_back(ReadAlert(r, i));
    return OkStatus();
  }));
  return out;
}

Status PostgresStore::UpdateBudgetAlertDelivery(const BudgetAlert& a) {
  return pool_->Run(PgTxMode::kAutocommit, [&](PgConnection& conn) -> Status {
    PgParams params;
    params.Add(a.seq).Add(static_cast<int64_t>(a.delivery_attempts));
    AddOptional(params, a.delivered_at);
    AddOptional(params, a.next_delivery_at).Add(a.last_error);
    TF_ASSIGN_OR_RETURN(PgResult r,
                        conn.Exec("UPDATE budget_alerts SET delivery_attempts = $2, "
                                  "delivered_at = $3, next_delivery_at = $4, last_error = $5 "
                                  "WHERE seq = $1",
                                  params));
    if (r.affected() == 0) {
      return NotFound("budget alert " + std::to_string(a.seq) + " does not exist");
    }
    return OkStatus();
  });
}

}  // namespace tf::store
