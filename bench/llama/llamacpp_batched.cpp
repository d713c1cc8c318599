// llama.cpp's batched greedy decode through its C API, as `linnet generate --prompts`
// runs it: up to SLOTS sequences at once, each its own sequence id in one llama_batch;
// every prompt is prefilled into a free sequence (llama_decode of its tokens, the last
// row's logits), then each step decodes one token of every live sequence in one
// llama_decode; a sequence that has its tokens leaves its id to the next prompt
// (llama_memory_seq_rm). Prints each prompt's tokens on a line, in order, and on stderr
// the same summary line as linnet's: decode tokens (the first token of each prompt
// comes from its prefill), steps, seconds, tokens/s.
//
// usage: llamacpp_batched MODEL.gguf --backends DIR --prompts FILE [--slots 8]
//          [--max-new-tokens 64] [--threads 2] [--ctx-per-seq 256]
// Built by bench/llama/batched-llamacpp.sh against the headers of the llama.cpp source
// node-llama-cpp bundles and its prebuilt libllama/libggml (../shared/peers/llamacpp).
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static int argmax(const float * row, int n) {
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (row[i] > row[best]) best = i;
    return best;
}

static void quiet_log(ggml_log_level, const char *, void *) {}

int main(int argc, char ** argv) {
    std::string model_path, backends, prompts_path;
    int slots = 8, n_new = 64, threads = 2, ctx_per_seq = 256;
    ggml_type kv_type = GGML_TYPE_F32;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", a.c_str()); exit(2); }
            return argv[++i];
        };
        if (a == "--backends") backends = next();
        else if (a == "--prompts") prompts_path = next();
        else if (a == "--slots") slots = std::atoi(next().c_str());
        else if (a == "--max-new-tokens") n_new = std::atoi(next().c_str());
        else if (a == "--threads") threads = std::atoi(next().c_str());
        else if (a == "--ctx-per-seq") ctx_per_seq = std::atoi(next().c_str());
        else if (a == "--kv-type") {
            std::string t = next();
            if (t == "f32") kv_type = GGML_TYPE_F32;
            else if (t == "f16") kv_type = GGML_TYPE_F16;
            else { fprintf(stderr, "--kv-type: f32 or f16, not %s\n", t.c_str()); return 2; }
        }
        else if (model_path.empty()) model_path = a;
        else { fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
    }
    std::vector<std::vector<llama_token>> prompts;
    {
        std::ifstream in(prompts_path);
        if (!in) { fprintf(stderr, "cannot read %s\n", prompts_path.c_str()); return 2; }
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            std::vector<llama_token> p;
            std::stringstream ss(line);
            for (std::string t; std::getline(ss, t, ',');) p.push_back(std::atoi(t.c_str()));
            prompts.push_back(p);
        }
    }
    if (prompts.empty() || slots < 1 || n_new < 1) { fprintf(stderr, "nothing to do\n"); return 2; }

    llama_log_set(quiet_log, nullptr);
    if (!backends.empty()) ggml_backend_load_all_from_path(backends.c_str());
    else ggml_backend_load_all();
    llama_backend_init();
    ggml_backend_dev_t cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (!cpu_dev) { fprintf(stderr, "no CPU backend loaded\n"); return 1; }
    ggml_backend_reg_t cpu_reg = ggml_backend_dev_backend_reg(cpu_dev);

    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model * model = llama_model_load_from_file(model_path.c_str(), mp);
    if (!model) { fprintf(stderr, "failed to load %s\n", model_path.c_str()); return 1; }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    // The configuration of the batch-1 comparison (../shared/peers/llamacpp: F32 KV cache
    // unless --kv-type f16, as linnet's -D KV=f16,
    // flash attention off, a persistent threadpool), with one KV stream per sequence
    // (kv_unified off: the sequences share no prefix).
    llama_context_params cp = llama_context_default_params();
    cp.n_seq_max = slots;
    cp.n_ctx = ctx_per_seq * slots;
    cp.n_batch = cp.n_ctx;
    cp.n_ubatch = 512;
    cp.kv_unified = false;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    cp.type_k = kv_type;
    cp.type_v = kv_type;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "failed to create the context\n"); return 1; }
    using tp_new_t = ggml_threadpool * (*)(ggml_threadpool_params *);
    using tp_free_t = void (*)(ggml_threadpool *);
    auto tp_new = (tp_new_t) ggml_backend_reg_get_proc_address(cpu_reg, "ggml_threadpool_new");
    auto tp_free = (tp_free_t) ggml_backend_reg_get_proc_address(cpu_reg, "ggml_threadpool_free");
    ggml_threadpool_params tpp = ggml_threadpool_params_default(threads);
    ggml_threadpool * pool = tp_new(&tpp);
    if (!pool) { fprintf(stderr, "threadpool creation failed\n"); return 1; }
    llama_attach_threadpool(ctx, pool, nullptr);
    llama_memory_t mem = llama_get_memory(ctx);

    const int np = (int) prompts.size();
    std::vector<std::vector<llama_token>> outputs(np);
    std::vector<int> owner(slots, -1), pos(slots, 0);
    int next_prompt = 0, done = 0;
    long prefill_tokens = 0, decode_tokens = 0, steps = 0;
    double prefill_s = 0, decode_s = 0;
    llama_batch batch = llama_batch_init(cp.n_batch, 0, 1);

    // Every free sequence takes the next prompt (its prefill is timed apart from decode).
    auto fill = [&]() -> bool {
        for (int s = 0; s < slots && next_prompt < np; ++s) {
            if (owner[s] >= 0) continue;
            const std::vector<llama_token> & p = prompts[next_prompt];
            if ((int) p.size() + n_new > ctx_per_seq) {
                fprintf(stderr, "prompt %d: %zu tokens + %d new do not fit %d\n", next_prompt, p.size(), n_new,
                        ctx_per_seq);
                return false;
            }
            llama_memory_seq_rm(mem, s, -1, -1);
            batch.n_tokens = (int) p.size();
            for (int i = 0; i < (int) p.size(); ++i) {
                batch.token[i] = p[i];
                batch.pos[i] = i;
                batch.n_seq_id[i] = 1;
                batch.seq_id[i][0] = s;
                batch.logits[i] = i + 1 == (int) p.size();
            }
            double t0 = now();
            if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "prefill failed\n"); return false; }
            prefill_s += now() - t0;
            outputs[next_prompt].push_back(argmax(llama_get_logits_ith(ctx, (int) p.size() - 1), n_vocab));
            prefill_tokens += (long) p.size();
            owner[s] = next_prompt;
            pos[s] = (int) p.size();
            if (n_new == 1) { owner[s] = -1; ++done; }
            ++next_prompt;
        }
        return true;
    };
    if (!fill()) return 1;
    while (done < np) {
        std::vector<int> rows;
        batch.n_tokens = 0;
        for (int s = 0; s < slots; ++s) {
            if (owner[s] < 0) continue;
            int i = batch.n_tokens++;
            batch.token[i] = outputs[owner[s]].back();
            batch.pos[i] = pos[s];
            batch.n_seq_id[i] = 1;
            batch.seq_id[i][0] = s;
            batch.logits[i] = 1;
            rows.push_back(s);
        }
        double t0 = now();
        if (llama_decode(ctx, batch) != 0) { fprintf(stderr, "decode failed at step %ld\n", steps); return 1; }
        decode_s += now() - t0;  // the call, as linnet's summary times decode_batch
        for (int i = 0; i < (int) rows.size(); ++i) {
            int s = rows[i];
            std::vector<llama_token> & o = outputs[owner[s]];
            o.push_back(argmax(llama_get_logits_ith(ctx, i), n_vocab));
            ++decode_tokens;
            ++pos[s];
            if ((int) o.size() >= n_new) { owner[s] = -1; ++done; }
        }
        ++steps;
        if (!fill()) return 1;
    }
    for (const std::vector<llama_token> & o : outputs) {
        for (size_t i = 0; i < o.size(); ++i) printf("%s%d", i ? "," : "", o[i]);
        printf("\n");
    }
    fprintf(stderr, "prompts: %d over %d slots; prefill: %ld tokens in %.3f s; decode: %ld tokens in %ld steps, "
                    "%.3f s, %.1f tokens/s\n",
            np, slots, prefill_tokens, prefill_s, decode_tokens, steps, decode_s,
            decode_s > 0 ? decode_tokens / decode_s : 0.0);
    llama_batch_free(batch);
    llama_free(ctx);
    tp_free(pool);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
