// SqliteStore's BudgetStore: budgets and the alerts they fired.
#include <cstdio>
#include <cstdlib>

#include "store/sqlite_store_impl.h"

namespace tf::store {
namespace {

constexpr const char* kBudgetColumns =
    "SELECT id, project_id, name, doc, created_at, updated_at FROM budgets ";

// Money and thresholds are REAL columns. Stmt binds and reads text, so they cross as text with
// every digit a double needs ("%.17g"; the '!' flag makes SQLite's printf print them all).
constexpr const char* kAlertColumns =
    "SELECT seq, budget_id, project_id, period_start, kind, printf('%!.17g', threshold), "
    "fired_at, printf('%!.17g', spend), printf('%!.17g', amount), message, next_delivery_at, "
    "delivery_attempts, delivered_at, last_error FROM budget_alerts ";

std::string FormatReal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double ReadReal(const Stmt& q, int column) { return std::strtod(q.Text(column).c_str(), nullptr); }

BudgetRecord ReadBudget(const Stmt& q) {
  return BudgetRecord{q.Text(0), q.Text(1), q.Text(2), q.Text(3), q.Int(4), q.Int(5)};
}

BudgetAlert ReadAlert(const Stmt& q) {
  BudgetAlert a;
  a.seq = q.Int(0);
  a.budget_id = q.Text(1);
  a.project_id = q.Text(2);
  a.period_start = q.Int(3);
  a.kind = q.Text(4);
  a.threshold = ReadReal(q, 5);
  a.fired_at = q.Int(6);
  a.spend = ReadReal(q, 7);
  a.amount = ReadReal(q, 8);
  a.message = q.Text(9);
  if (!q.IsNull(10)) a.next_delivery_at = q.Int(10);
  a.delivery_attempts = static_cast<int>(q.Int(11));
  if (!q.IsNull(12)) a.delivered_at = q.Int(12);
  a.last_error = q.Text(13);
  return a;
}

void BindOptional(Stmt& q, int index, const std::optional<TimeMs>& value) {
  if (value) {
    q.Bind(index, *value);
  } else {
    q.BindNull(index);
  }
}

Status ReadAlerts(Stmt& q, std::vector<BudgetAlert>& out) {
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) return OkStatus();
    out.push_back(ReadAlert(q));
  }
}

}  // namespace

Status SqliteStore::CreateBudget(const BudgetRecord& b) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("INSERT INTO budgets (id, project_id, name, doc, "
                                           "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
                                           "ON CONFLICT DO NOTHING"));
    TF_RETURN_IF_ERROR(q.Bind(1, b.id)
                           .Bind(2, b.project_id)
                           .Bind(3, b.name)
                           .Bind(4, b.doc_json)
                           .Bind(5, b.created_at)
                           .Bind(6, b.updated_at)
                           .Run());
    if (db.Changes() == 1) return OkStatus();
    TF_ASSIGN_OR_RETURN(Stmt named,
                        db.Prepare("SELECT 1 FROM budgets WHERE project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool taken, named.Bind(1, b.project_id).Bind(2, b.name).Step());
    if (taken) {
      return AlreadyExists("budget '" + b.name + "' already exists in project " + b.project_id);
    }
    return AlreadyExists("budget " + b.id + " already exists");
  });
}

Status SqliteStore::UpdateBudget(const BudgetRecord& b) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare("UPDATE budgets SET doc = ?, updated_at = ? WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, b.doc_json).Bind(2, b.updated_at).Bind(3, b.id).Run());
    if (db.Changes() == 0) return NotFound("budget " + b.id + " does not exist");
    return OkStatus();
  });
}

Result<BudgetRecord> SqliteStore::GetBudget(const std::string& project_id,
                                            const std::string& name) {
  BudgetRecord out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare(std::string(kBudgetColumns) + "WHERE project_id = ? AND name = ?"));
    TF_ASSIGN_OR_RETURN(bool row, q.Bind(1, project_id).Bind(2, name).Step());
    if (!row) return NotFound("budget '" + name + "' does not exist in project " + project_id);
    out = ReadBudget(q);
    return OkStatus();
  }));
  return out;
}

Result<std::vector<BudgetRecord>> SqliteStore::ListBudgets(const std::string& project_id) {
  std::vector<BudgetRecord> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q,
                        db.Prepare(std::string(kBudgetColumns) + "WHERE ?1 = '' OR project_id = ?1 "
                                                                 "ORDER BY project_id, name"));
    q.Bind(1, project_id);
    for (;;) {
      TF_ASSIGN_OR_RETURN(bool row, q.Step());
      if (!row) return OkStatus();
      out.push_back(ReadBudget(q));
    }
  }));
  return out;
}

Status SqliteStore::DeleteBudget(const std::string& id) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("DELETE FROM budgets WHERE id = ?"));
    TF_RETURN_IF_ERROR(q.Bind(1, id).Run());
    if (db.Changes() == 0) return NotFound("budget " + id + " does not exist");
    TF_ASSIGN_OR_RETURN(Stmt alerts, db.Prepare("DELETE FROM budget_alerts WHERE budget_id = ?"));
    return alerts.Bind(1, id).Run();
  });
}

Result<bool> SqliteStore::AddBudgetAlert(const BudgetAlert& a) {
  bool added = false;
  TF_RETURN_IF_ERROR(writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(
        Stmt q, db.Prepare("INSERT INTO budget_alerts (budget_id, project_id, period_start, kind, "
                           "threshold, fired_at, spend, amount, message, next_delivery_at, "
                           "delivery_attempts, delivered_at, last_error) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                           "ON CONFLICT (budget_id, period_start, kind, threshold) DO NOTHING"));
    q.Bind(1, a.budget_id)
        .Bind(2, a.project_id)
        .Bind(3, a.period_start)
        .Bind(4, a.kind)
        .Bind(5, FormatReal(a.threshold))
        .Bind(6, a.fired_at)
        .Bind(7, FormatReal(a.spend))
        .Bind(8, FormatReal(a.amount))
        .Bind(9, a.message);
    BindOptional(q, 10, a.next_delivery_at);
    q.Bind(11, static_cast<int64_t>(a.delivery_attempts));
    BindOptional(q, 12, a.delivered_at);
    q.Bind(13, a.last_error);
    TF_RETURN_IF_ERROR(q.Run());
    added = db.Changes() == 1;
    return OkStatus();
  }));
  return added;
}

Result<std::vector<BudgetAlert>> SqliteStore::ListBudgetAlerts(const std::string& project_id,
                                                               int64_t after_seq, int limit) {
  std::vector<BudgetAlert> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kAlertColumns) +
                                           "WHERE (?1 = '' OR project_id = ?1) AND seq > ?2 "
                                           "ORDER BY seq LIMIT ?3"));
    q.Bind(1, project_id).Bind(2, after_seq).Bind(3, static_cast<int64_t>(limit));
    return ReadAlerts(q, out);
  }));
  return out;
}

Result<std::vector<BudgetAlert>> SqliteStore::DueBudgetAlerts(TimeMs now, int limit) {
  std::vector<BudgetAlert> out;
  TF_RETURN_IF_ERROR(readers_.With([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare(std::string(kAlertColumns) +
                                           "WHERE next_delivery_at IS NOT NULL AND "
                                           "next_delivery_at <= ? ORDER BY seq LIMIT ?"));
    q.Bind(1, now).Bind(2, static_cast<int64_t>(limit));
    return ReadAlerts(q, out);
  }));
  return out;
}

Status SqliteStore::UpdateBudgetAlertDelivery(const BudgetAlert& a) {
  return writer_->Write([&](SqliteDb& db) -> Status {
    TF_ASSIGN_OR_RETURN(Stmt q, db.Prepare("UPDATE budget_alerts SET delivery_attempts = ?, "
                                           "delivered_at = ?, next_delivery_at = ?, "
                                           "last_error = ? WHERE seq = ?"));
    q.Bind(1, static_cast<int64_t>(a.delivery_attempts));
    BindOptional(q, 2, a.delivered_at);
    BindOptional(q, 3, a.next_delivery_at);
    TF_RETURN_IF_ERROR(q.Bind(4, a.last_error).Bind(5, a.seq).Run());
    if (db.Changes() == 0)
      return NotFound("budget alert " + std::to_string(a.seq) + " does not exist");
    return OkStatus();
  });
}

}  // namespace tf::store
