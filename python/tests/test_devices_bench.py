"""attnvk.devices and attnvk.bench records."""
import attnvk

RECORD_KEYS = {"implementation", "api", "device_name", "case", "status", "reason", "variant", "tile_br", "tile_bc",
               "samples_ms", "stats", "flops", "tflops", "tokens_per_s", "gbytes_per_s", "check", "launches"}


def test_devices():
    listed = attnvk.devices()
    assert any(d["api"] == "cpu" for d in listed)
    for d in listed:
        assert {"api", "index", "name", "type", "fp16", "memory_bytes", "spec"} <= set(d)
        assert d["spec"] == f"{d['api']}:{d['index']}"
    assert attnvk.library_path()


def test_bench_records(api):
    records = attnvk.bench(batch=1, heads=4, kv_heads=2, seq_q=32, head_dim=64, dtype="f32", causal=True, api=api,
                           iters=3, launches=2)
    assert records and all(RECORD_KEYS <= set(r) for r in records)
    for r in records:
        assert r["status"] == "ok", r["reason"]
        assert r["api"] == api and r["check"]["passed"] and r["check"]["rel_l2"] <= 1e-5
        assert len(r["samples_ms"]) == 3 and r["stats"]["median_ms"] > 0 and r["tflops"] > 0
        assert r["case"]["kv_heads"] == 2 and r["case"]["causal"] and r["launches"] == 2


def test_bench_checks_quantized_paged_cache():
    (r,) = attnvk.bench(batch=2, heads=4, kv_heads=1, seq_q=1, seq_kv=70, head_dim=64, dtype="f32", api="cpu",
                        kv_dtype="q8_0", page_size=16, iters=2)
    assert r["status"] == "ok" and r["check"]["passed"], r
    assert r["case"]["kv_format"] == "q8_0" and r["case"]["page_size"] == 16 and "read_bandwidth_gbps" in r


def test_bench_unknown_api_is_an_error():
    try:
        attnvk.bench(api="metal")
    except attnvk.InvalidArgument as e:
        assert str(e) == "unknown API 'metal' (cpu, vulkan, opencl, cuda, hip)"
    else:
        raise AssertionError("no error")
