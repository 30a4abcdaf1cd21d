// GET /api/{type}s/{repo}/xet-{read|write}-token/{rev}[?create_pr=1]: a Xet access token for the
// CAS on this same server. The caller's Hub token is checked as for the matching Hub route (a read
// token is a file download, a write token a commit); the CAS token is for the repo, whatever the
// revision (clients ask with a commit, a branch, or "None" before a pull request exists).
#include "routes.h"
#include "xet_auth.h"

namespace khub::localhub {

void get_xet_token(Hub& hub, const Req& req, Res& res, const RepoKey& key, bool write, std::string_view revision) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo) return;
  const bool create_pr = req.get_param_value("create_pr") == "1";
  if (write ? !may_commit(hub, who, *repo, revision, create_pr, res) : !check_gate(hub, who, *repo, res)) return;
  const auto token = mint_xet_token(hub, *repo, write ? XetAccess::Write : XetAccess::Read);
  const std::string cas = base_url(req, hub.port);
  // huggingface_hub reads the headers, hf_xet the JSON body.
  res.set_header("X-Xet-Cas-Url", cas);
  res.set_header("X-Xet-Access-Token", token.token);
  res.set_header("X-Xet-Token-Expiration", std::to_string(token.expires));
  res.set_header("Cache-Control", "no-store");
  send_json(res, {{"accessToken", token.token}, {"exp", token.expires}, {"casUrl", cas}});
}

}  // namespace khub::localhub
