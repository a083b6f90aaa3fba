#include "cli/cli.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"

namespace tf::cli {

int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return 1;
}

void RunStatus(CLI::App* cmd, int& exit_code, std::function<Status()> verb) {
  cmd->callback([&exit_code, verb = std::move(verb)] {
    Status status = verb();
    if (!status.ok()) exit_code = Fail(status);
  });
}

void RunExitCode(CLI::App* cmd, int& exit_code, std::function<Result<int>()> verb) {
  cmd->callback([&exit_code, verb = std::move(verb)] {
    Result<int> code = verb();
    exit_code = code.ok() ? *code : Fail(code.status());
  });
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Unavailable("cannot read " + path + ": " + std::strerror(errno));
  return text.str();
}

void PrintJson(const Json& j) { std::cout << j.dump(2) << "\n"; }

std::string Cell(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string Moment(const Json& v) {
  if (!v.is_string()) return "-";
  std::string s = v.get<std::string>().substr(0, 19);
  if (s.size() > 10 && s[10] == 'T') s[10] = ' ';
  return s;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "tensorfleet: run AI workloads on your own GPU machines.\n\n"
      "Start a single-machine platform with `tensorfleet up`; every other verb talks to it."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tensorfleet 0.1.0");
  client::Connection conn;
  app.add_option("--server", conn.server,
                 "Server URL (default: $TENSORFLEET_URL, then DATA_DIR/url)")
      ->type_name("URL");
  app.add_option("--token", conn.token,
                 "API token (default: $TENSORFLEET_TOKEN, then DATA_DIR/admin-token)")
      ->type_name("TOKEN");
  app.add_option("--data-dir", conn.data_dir,
                 "Data directory (default: $TENSORFLEET_HOME, then ~/.tensorfleet)")
      ->type_name("DIR");
  app.add_flag("--json", conn.json, "Print JSON instead of tables");

  int exit_code = 0;
  AddServerCommands(app, conn, exit_code);
  AddQueueCommands(app, conn, exit_code);
  AddAuthCommands(app, conn, exit_code);
  AddObjectCommands(app, conn, exit_code);
  AddS3Commands(app, conn, exit_code);
  AddDatasetCommands(app, conn, exit_code);
  AddJobCommands(app, conn, exit_code);
  AddEndpointCommands(app, conn, exit_code);
  AddFleetCommands(app, conn, exit_code);
  AddPoolCommands(app, conn, exit_code);
  AddEngineCommands(app, conn, exit_code);
  AddCostCommands(app, conn, exit_code);
  AddPlanCommands(app, conn, exit_code);
  AddSweepCommands(app, conn, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  return exit_code;
}

}  // namespace tf::cli
