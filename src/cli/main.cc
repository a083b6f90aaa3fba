// The tensorfleet command. The verbs live in cli/*.cc; this only hands over to them.
#include "cli/cli.h"

int main(int argc, char** argv) { return tf::cli::Main(argc, argv); }
