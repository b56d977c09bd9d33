// How the PostgreSQL stores show a connection string: no piece of its password reaches a
// message, whatever libpq makes of a mistyped one. Needs no server.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "loom/util/error.h"
#include "postgres/pg_connection.h"

namespace loom::postgres {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A URL libpq reads otherwise than meant (a raw '%', '/' or '@' in the password, a keyword in
// capitals): libpq's message quotes pieces of it, none of which may reach the user. Needs no
// server: each fails before or at connecting to 127.0.0.1:1.
TEST(PostgresRedaction, NoPieceOfAMistypedPasswordReachesAMessage) {
  struct Case {
    std::string url;
    std::vector<std::string> secrets;
  };
  for (const Case& c : std::vector<Case>{
           {"postgresql://loom:p%ssw0rd-SECRET@127.0.0.1:1/x", {"ssw0rd", "SECRET"}},
           {"postgresql://loom:SECRET/half@127.0.0.1:1/x", {"SECRET", "half"}},
           {"postgresql://loom:half@SECRET2@127.0.0.1:1/x", {"SECRET2", "half"}},
           {"host=127.0.0.1 port=1 PASSWORD=SECRET3 user=loom", {"SECRET3"}},
           {"host=127.0.0.1 port=1 password SECRET4 user=loom", {"SECRET4"}},
       }) {
    SCOPED_TRACE(c.url);
    try {
      Connection conn(c.url, "loom");
      FAIL() << "connected to nothing";
    } catch (const UnavailableError& e) {
      for (const auto& secret : c.secrets) EXPECT_THAT(e.what(), Not(HasSubstr(secret)));
      EXPECT_THAT(e.what(), HasSubstr("check the url"));
    }
  }
  // What libpq says stays readable: the option it could not read is named.
  EXPECT_EQ(redactMessage("invalid connection option \"PASSWORD\"", "PASSWORD=x"),
            "invalid connection option \"PASSWORD\"");
  EXPECT_EQ(redactMessage("missing \"=\" after \"SECRET4\" in connection info string",
                          "password SECRET4"),
            "missing \"***\" after \"***\" in connection info string");
  EXPECT_EQ("(a connection string libpq cannot parse)", redactUrl("host=h PASSWORD=pw user=u"));
}

// `loom config check` refuses a URL libpq would read otherwise than written, naming why, and
// never quotes the password doing so.
TEST(PostgresRedaction, AUrlLibpqWouldMisreadIsNamedWithoutItsPassword) {
  EXPECT_EQ(urlProblem("postgresql://loom:pw@127.0.0.1:5432/x"), std::nullopt);
  EXPECT_EQ(urlProblem("postgresql://loom:p%40w%2F@127.0.0.1:5432/x?sslmode=disable"),
            std::nullopt);
  EXPECT_EQ(urlProblem("postgresql://127.0.0.1:5432/x"), std::nullopt);
  EXPECT_EQ(urlProblem("host=127.0.0.1 password=a/b@c"), std::nullopt);
  EXPECT_EQ(urlProblem("postgresql://loom@127.0.0.1:5432/team@x"), std::nullopt);  // no password
  for (const auto& [url, why] : std::vector<std::pair<std::string, std::string>>{
           {"postgresql://loom:SECRET/half@127.0.0.1:5432/x", "raw '/'"},
           {"postgresql://loom:half@SECRET@127.0.0.1:5432/x", "raw '@'"},
           {"postgresql://loom:SECRET%zz@127.0.0.1:5432/x", "cannot parse"},
       }) {
    SCOPED_TRACE(url);
    std::optional<std::string> problem = urlProblem(url);
    ASSERT_TRUE(problem.has_value());
    EXPECT_THAT(*problem, HasSubstr(why));
    EXPECT_THAT(*problem, Not(HasSubstr("SECRET")));
  }
}

}  // namespace
}  // namespace loom::postgres
