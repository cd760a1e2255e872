/* Compiled as C99: proves include/kazeia/kazeia.h is valid C and usable from
 * C alone. Loads the model given on argv[1], tokenizes a prompt, generates 8
 * greedy tokens and prints them (pieces as they stream, then the ids). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kazeia/kazeia.h"

static int print_piece(const char* piece, size_t len, void* user) {
  size_t* streamed = (size_t*)user;
  *streamed += len;
  fwrite(piece, 1, len, stdout);
  return 1;
}

static int fail(const char* what, kz_status st) {
  fprintf(stderr, "c_smoke: %s: %s (%s)\n", what, kz_status_name(st), kz_last_error());
  return 1;
}

int main(int argc, char** argv) {
  const char* text = "The quick brown fox jumps over the lazy dog";
  kz_engine_options eo = kz_engine_options_default();
  kz_generate_options go = kz_generate_options_default();
  kz_engine* engine = NULL;
  kz_session* session = NULL;
  kz_generate_result result;
  int32_t* ids = NULL;
  size_t n_ids = 0, streamed = 0, i;
  kz_status st;

  if (argc != 2) {
    fprintf(stderr, "usage: c_smoke MODEL.gguf\n");
    return 2;
  }
  printf("kazeia %s\n", kz_version());
  eo.n_threads = 1;
  eo.n_ctx = 256;
  st = kz_engine_load(argv[1], &eo, &engine);
  if (st != KZ_OK) return fail("load", st);
  printf("architecture %s, %lld tokens\n", kz_engine_architecture(engine), (long long)kz_engine_n_vocab(engine));

  /* Ask for the size first (NULL buffer), then tokenize into a buffer of it. */
  st = kz_tokenize(engine, text, strlen(text), 1, 1, NULL, 0, &n_ids);
  if (st != KZ_ERR_BUFFER_TOO_SMALL || n_ids == 0) return fail("tokenize (size)", st);
  ids = (int32_t*)malloc(n_ids * sizeof *ids);
  if (ids == NULL) return 1;
  st = kz_tokenize(engine, text, strlen(text), 1, 1, ids, n_ids, &n_ids);
  if (st != KZ_OK) return fail("tokenize", st);
  printf("prompt %zu tokens\n", n_ids);

  st = kz_session_new(engine, &session);
  if (st != KZ_OK) return fail("session", st);
  go.max_tokens = 8;
  go.sampling.temperature = 0.0f;
  go.ignore_eos = 1;
  printf("text: ");
  st = kz_session_generate(session, ids, n_ids, &go, print_piece, &streamed, &result);
  if (st != KZ_OK) return fail("generate", st);
  printf("\n");
  if (result.n_tokens != 8 || streamed != result.text_len) {
    fprintf(stderr, "c_smoke: %zu tokens, %zu bytes streamed of %zu\n", result.n_tokens, streamed, result.text_len);
    return 1;
  }
  printf("tokens:");
  for (i = 0; i < result.n_tokens; ++i) printf(" %d", (int)result.tokens[i]);
  printf("\nstop: %s\n", kz_stop_reason_name(result.stop_reason));

  kz_session_free(session);
  kz_engine_free(engine);
  free(ids);
  return 0;
}
