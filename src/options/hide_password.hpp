// A password in --url on the command line can be read by every user of the machine, in ps(1) and
// /proc/PID/cmdline. Overwriting it in redlockrun's own argv, as mysql(1) does, leaves it there
// only from exec until the command line is parsed (the warning about it stays: it was visible).
#pragma once

#include <string>
#include <vector>

namespace redlockrun {

// Blots out the password of each of `urls` (every --url value given) where it appears in argv as
// an option's value ("URL", "--url=URL", "-uURL"): it becomes one '*', whatever its length, and the
// words after it move up behind it (argv's pointers with them), so that what ps and
// /proc/PID/cmdline show says nothing of its length. The bytes argv takes cannot change, and end in
// NULs: one who counts those learns the length still, from what is left over.
void hide_url_passwords(int argc, char** argv, const std::vector<std::string>& urls);

} // namespace redlockrun
