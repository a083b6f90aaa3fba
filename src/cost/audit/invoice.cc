#include "cost/audit/invoice.h"

#include "cost/numbers.h"

namespace tf::cost {

Result<std::unique_ptr<InvoiceReader>> InvoiceReader::Open(std::unique_ptr<ByteSource> source,
                                                           const std::string& name,
                                                           ProblemLog* problems) {
  std::unique_ptr<InvoiceReader> r(new InvoiceReader(std::move(source), name, problems));
  TF_ASSIGN_OR_RETURN(bool has_header, r->csv_.Next());
  if (!has_header) return InvalidArgument(name + ": empty invoice, expected a header row");
  const auto& h = r->csv_.fields();
  r->fields_ = h.size();
  for (size_t i = 0; i < h.size(); ++i) {
    int index = static_cast<int>(i);
    if (h[i] == "resource_id") r->resource_ = index;
    if (h[i] == "instance_type") r->type_ = index;
    if (h[i] == "region") r->region_ = index;
    if (h[i] == "hours") r->hours_ = index;
    if (h[i] == "rate_usd_per_hour") r->rate_ = index;
    if (h[i] == "amount_usd") r->amount_ = index;
    if (h[i] == "period_start") r->start_ = index;
    if (h[i] == "period_end") r->end_ = index;
    if (h[i] == "description") r->description_ = index;
  }
  std::string missing;
  for (auto [column, at] : {std::pair{"resource_id", r->resource_},
                            {"hours", r->hours_},
                            {"rate_usd_per_hour", r->rate_},
                            {"amount_usd", r->amount_}}) {
    if (at < 0) missing += (missing.empty() ? "" : ", ") + std::string(column);
  }
  if (!missing.empty()) {
    return InvalidArgument(name + ":1: invoice is missing required column(s): " + missing);
  }
  return r;
}

Result<bool> InvoiceReader::Next(InvoiceRow* row) {
  for (;;) {
    TF_ASSIGN_OR_RETURN(bool more, csv_.Next());
    if (!more) return false;
    const auto& f = csv_.fields();
    int64_t line = csv_.line();
    if (f.size() != fields_) {
      problems_->Add(
          name(), line, "",
          "expected " + std::to_string(fields_) + " fields, found " + std::to_string(f.size()));
      continue;
    }
    auto text = [&](int i) { return i >= 0 ? f[static_cast<size_t>(i)] : std::string_view(); };
    bool ok = true;
    auto number = [&](int i, const char* column, double* out) {
      auto v = ParseNumber(text(i));
      if (!v) {
        problems_->BadValue(name(), line, column, text(i), "a number");
        ok = false;
        return;
      }
      *out = *v;
    };
    auto time = [&](int i, const char* column, int64_t* out) {
      *out = 0;
      if (text(i).empty()) return;
      auto v = ParseUtcTime(text(i));
      if (!v) {
        problems_->BadValue(name(), line, column, text(i), "a UTC date or date-time");
        ok = false;
        return;
      }
      *out = *v;
    };
    row->line = line;
    row->resource_id = text(resource_);
    row->instance_type = text(type_);
    row->region = text(region_);
    row->description = text(description_);
    number(hours_, "hours", &row->hours);
    number(rate_, "rate_usd_per_hour", &row->rate);
    number(amount_, "amount_usd", &row->amount);
    time(start_, "period_start", &row->period_start);
    time(end_, "period_end", &row->period_end);
    if (ok && row->resource_id.empty()) {
      problems_->Add(name(), line, "resource_id", "empty resource_id");
      ok = false;
    }
    if (ok && row->hours < 0) {
      problems_->BadValue(name(), line, "hours", text(hours_), "hours of 0 or more");
      ok = false;
    }
    if (ok && row->rate < 0) {
      problems_->BadValue(name(), line, "rate_usd_per_hour", text(rate_), "a rate of 0 or more");
      ok = false;
    }
    if (ok && row->period_start != 0 && row->period_end != 0 &&
        row->period_end <= row->period_start) {
      problems_->BadValue(name(), line, "period_end", text(end_), "a time after period_start");
      ok = false;
    }
    if (ok) return true;
  }
}

}  // namespace tf::cost
