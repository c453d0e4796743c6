// Create or update one pull-request comment, found by a hidden marker on its first line, so that every
// push edits the same comment instead of piling up new ones. Used from actions/github-script by
// preview.yml (guard report) and plan-comment.yml (offline plan diff of pull requests from forks).
'use strict';

// GitHub rejects comment bodies longer than 65536 characters.
const MAX_BODY = 65000;

module.exports = async function upsertComment({ github, context, issueNumber, marker, body }) {
  let text = `${marker}\n${body}`;
  if (text.length > MAX_BODY) {
    text = `${text.slice(0, MAX_BODY - 120)}\n\n… truncated: the full output is in the workflow run.\n`;
  }
  const { owner, repo } = context.repo;
  const comments = await github.paginate(github.rest.issues.listComments, {
    owner,
    repo,
    issue_number: issueNumber,
    per_page: 100,
  });
  // Only our own (bot) comments: a person quoting the marker must not have their comment rewritten.
  const previous = comments.find((c) => c.user && c.user.type === 'Bot' && (c.body || '').startsWith(marker));
  if (previous) {
    await github.rest.issues.updateComment({ owner, repo, comment_id: previous.id, body: text });
    return previous.id;
  }
  const { data } = await github.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body: text });
  return data.id;
};
