/*
 * fuzz-claude-stream.c -- the Claude Code stream parser
 * (src/runtime/claude.c) under the turn driver, for any output: the
 * checks of stream-fuzz.h.
 */
#include "stream-fuzz.h"

static void *
claude_open(uint8_t first)
{
	(void)first;
	return hd_claude__stream_new();
}

static int
claude_line(void *p, hd_runtime_emit *em, const char *l, size_t n)
{
	return hd_claude__stream_line(p, em, l, n);
}

static void
claude_finish(void *p, hd_runtime_emit *em, int exit_code, const char *tail)
{
	hd_claude__stream_finish(p, em, exit_code, tail);
}

static void
claude_close(void *p)
{
	hd_claude__stream_free(p);
}

static const stream_fuzz parser = {
    "claude-code: ", claude_open, claude_line, claude_finish, claude_close};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return stream_fuzz_one(&parser, data, size);
}

#define INIT                                                                   \
	"{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-1\","    \
	"\"mcp_servers\":[{\"name\":\"huddle\",\"status\":\"failed\"}]}\n"
#define CALL                                                                   \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"         \
	"\"tool_use\",\"id\":\"t1\",\"name\":\"mcp__huddle__task_claim\","     \
	"\"input\":{\"id\":7}}]}}\n"
#define RESULT                                                                 \
	"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":"              \
	"\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true,"            \
	"\"content\":[{\"type\":\"text\",\"text\":\"denied\"}]}]}}\n"
#define TEXT                                                                   \
	"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":"         \
	"\"text\",\"text\":\"FINAL ok\"}]}}\n"
#define RETRY                                                                  \
	"{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,"        \
	"\"max_retries\":1,\"retry_delay_ms\":571.7,\"error_status\":529,"     \
	"\"error\":\"overloaded\"}\n"

const char *const hd_fuzz_seeds[] = {
    "\x00",
    "\x00" INIT CALL RESULT TEXT
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"FINAL ok\",\"session_id\":\"s-1\",\"total_cost_usd\":"
    "0.002,\"usage\":{\"input_tokens\":200,\"output_tokens\":40},"
    "\"permission_denials\":[{\"tool_name\":\"mcp__huddle__task_claim\"}]}",
    "\x01" INIT RETRY
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"API Error: 529 x\"}]},\"error\":\"server_error\"}\n"
    "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,"
    "\"api_error_status\":529,\"result\":\"API Error: 529 Overloaded\\n"
    "\\u0001more\",\"total_cost_usd\":0}\n",
    "\x05{\"type\":\"result\",\"is_error\":true,\"result\":\"Not logged "
    "in\"}",
    "\x02" INIT TEXT "{\"type\":\"result\",\"result\":\"x\"}\n",
    "\x03" INIT TEXT,
    "\x00" TEXT TEXT "{\"type\":\"result\",\"is_err",
    "\x00not json\n[1]\n{}\n{\"type\":7}\n\n\r\n{\"type\":\"assistant\"}\n",
    "\x00{\"type\":\"result\",\"subtype\":\"error_max_turns\","
    "\"is_error\":true}",
    "\x00{\"type\":\"result\",\"total_cost_usd\":1e300,\"usage\":"
    "{\"input_tokens\":-5,\"output_tokens\":9223372036854775807,"
    "\"cache_read_input_tokens\":9223372036854775807}}",
    "\x00{\"type\":\"result\",\"total_cost_usd\":-1,\"result\":7}",
    "\x00{\"type\":\"system\",\"subtype\":\"api_retry\",\"retry_delay_ms\":"
    "1e308,\"attempt\":-3,\"max_retries\":\"x\",\"error\":\"a\\nb\"}",
    /* found by libFuzzer: a failed result whose text was DEL bytes only
     * made the error "claude-code: " and spaces, which the emitter trims
     * to a bare "claude-code:" */
    "\xff{\"type\":\"result\",\"result\":\"\x7f\x7f\x7f\\n!!!\",\"is_error\":"
    "true}\n",
    NULL,
};

const char *const hd_fuzz_tokens[] = {
    STREAM_FUZZ_JSON_TOKENS,
    "{\"type\":\"assistant\",\"message\":{\"content\":[",
    "{\"type\":\"text\",\"text\":\"hi\"}",
    "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"x\",\"input\":{}}",
    "]}}\n",
    "]},\"error\":\"unknown\"}\n",
    "{\"type\":\"user\",\"message\":{\"content\":[",
    "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"ok\"}",
    "{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"is_error\":true}",
    INIT,
    RETRY,
    CALL,
    RESULT,
    TEXT,
    "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"API Error: 400 x\"}]},\"error\":\"unknown\"}\n",
    "{\"type\":\"user\",\"message\":{\"content\":\"prompt\"}}\n",
    "{\"type\":\"result\",\"is_error\":false,\"result\":\"FINAL\","
    "\"total_cost_usd\":0.002,\"permission_denials\":[{\"tool_name\":"
    "\"t\"},{\"tool_name\":\"t\"},{}]}\n",
    "{\"type\":\"result\",\"is_error\":true,\"api_error_status\":400,"
    "\"result\":\"API Error: 400 \\u0001bad\\nline\"}\n",
    "{\"type\":\"result\",\"subtype\":\"error_during_execution\","
    "\"is_error\":true,\"errors\":[\"boom\"]}\n",
    "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":"
    "true,\"total_cost_usd\":0.5}\n",
    "{\"type\":\"result\",",
    "\"subtype\":\"success\",",
    "\"subtype\":\"error_max_turns\",",
    "\"is_error\":true,",
    "\"is_error\":false,",
    "\"api_error_status\":400,",
    "\"api_error_status\":null,",
    "\"result\":\"API Error: 400 bad\",",
    "\"result\":\"FINAL\",",
    "\"result\":\"\x7f \\t\\u0001\",",
    "\"session_id\":\"s-2\",",
    "\"total_cost_usd\":0.002,",
    "\"total_cost_usd\":1e300,",
    "\"usage\":{\"input_tokens\":200,\"output_tokens\":40},",
    "\"permission_denials\":[{\"tool_name\":\"t\"},{}],",
    "\"errors\":[\"boom\"],",
    "\"x\":0}\n",
    NULL,
};
