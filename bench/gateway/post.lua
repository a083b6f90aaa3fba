-- wrk: POST the benchmark's chat request, with the token in BENCH_TOKEN when set.
wrk.method = "POST"
wrk.body = '{"model":"bench","messages":[{"role":"user","content":"hi"}],"max_tokens":1}'
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
