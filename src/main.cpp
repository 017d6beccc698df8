#include "app.hpp"

int main(int argc, char** argv) {
    return redlockrun::main_entry(argc, argv, redlockrun::installed_config_places());
}
