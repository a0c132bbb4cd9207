"""`import kcast` against the `kcast` binary: each call returns exactly what the command prints,
kernel lists are written byte for byte as the CLI writes them, bad input raises KcastError with the
CLI's message, and threads run commands in parallel. Run by ctest (python_api) with PYTHONPATH set to
the build's python/ folder and KCAST_BINARY to the CLI."""
import json
import os
import subprocess
import tempfile
import threading
import unittest

import kcast

BINARY = os.environ.get("KCAST_BINARY", "kcast")
SOURCE = os.environ.get("KCAST_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def cli(*args):
    p = subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = cli(*args)
    assert rc == 0, err
    return json.loads(out)


class GpusTest(unittest.TestCase):
    def test_the_database_as_the_cli_prints_it(self):
        self.assertEqual(kcast.gpus(), cli_json("gpus", "--format", "json")["gpus"])
        self.assertEqual(kcast.gpu("NVIDIA H100 80GB HBM3"), cli_json("gpus", "H100-SXM", "--format", "json"))

    def test_an_unknown_gpu_raises_the_cli_message(self):
        with self.assertRaises(kcast.KcastError) as e:
            kcast.gpu("H1000")
        rc, _, err = cli("gpus", "H1000", "--format", "json")
        self.assertEqual(rc, 2)
        self.assertEqual("kcast: " + str(e.exception), err.strip().splitlines()[-1])


class SynthTest(unittest.TestCase):
    def test_the_list_is_the_clis_byte_for_byte(self):
        with tempfile.TemporaryDirectory() as d:
            mine, theirs = os.path.join(d, "py.csv"), os.path.join(d, "cli.csv")
            lst = kcast.synth("llama3-8b", batch=2, seq=256, mode="train", attention="flash", tp=2)
            lst.to_csv(mine)
            rc, _, err = cli("synth", "llama3-8b", "--batch", 2, "--seq", 256, "--mode", "train", "--attention",
                             "flash", "--tp", 2, "-o", theirs)
            self.assertEqual(rc, 0, err)
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                self.assertEqual(a.read(), b.read())
            with open(theirs) as f:
                self.assertEqual(len(lst), sum(1 for _ in f) - 1)
            self.assertIn("name", lst[0])

    def test_with_gpus_the_predicted_step_too(self):
        lst, steps = kcast.synth("llama3-8b", gpus=["H100-SXM", "A100-SXM4-80GB"], mode="decode", batch=8, seq=1024,
                                 runtime="serving", attention="flash", cuda_graph=True)
        expected = cli_json("synth", "llama3-8b", "--mode", "decode", "--batch", 8, "--seq", 1024, "--runtime",
                            "serving", "--attention", "flash", "--cuda-graph", "--gpu", "H100-SXM,A100-SXM4-80GB",
                            "--format", "json", "-o", os.devnull)
        self.assertEqual(steps, expected)
        self.assertGreater(len(lst), 5)

    def test_a_bad_option_names_it(self):
        with self.assertRaises(kcast.KcastError) as e:
            kcast.synth("llama3-8b", tp=3)
        self.assertIn("tp", str(e.exception))
        with self.assertRaises(kcast.KcastError) as e:
            kcast.synth("llama3-8b", mode="sideways")
        self.assertIn("'--mode'", str(e.exception))


class MixtureTrainingTest(unittest.TestCase):
    def test_the_expert_parallel_keys_as_the_cli_prints_them(self):
        opts = dict(mode="train", batch=16, seq=1024, attention="flash", framework="megatron", dp=8, ep=8,
                    microbatches=2, moe_dispatcher="deepep", moe_a2a_overlap=True)
        _, steps = kcast.synth("mixtral-8x7b", gpus=["H100-SXM"], **opts)
        expected = cli_json("synth", "mixtral-8x7b", "--mode", "train", "--batch", 16, "--seq", 1024, "--attention",
                            "flash", "--framework", "megatron", "--dp", 8, "--ep", 8, "--microbatches", 2,
                            "--moe-dispatcher", "deepep", "--moe-a2a-overlap", "--gpu", "H100-SXM", "--format",
                            "json", "-o", os.devnull)
        self.assertEqual(steps, expected)
        step = steps[0]
        self.assertEqual(step["moe_dispatcher"], "deepep")
        self.assertTrue(step["moe_a2a_overlap"])
        self.assertEqual(step["routing"], "balanced")
        self.assertLessEqual(step["exposed_all_to_all_s"], step["all_to_all_s"])
        self.assertGreater(step["expert_compute_share"], 0)
        self.assertLess(step["expert_compute_share"], 1)

    def test_token_drop_and_imbalance_are_the_clis_flags(self):
        opts = dict(mode="train", batch=16, seq=1024, attention="flash", framework="megatron", dp=8, ep=8,
                    microbatches=2)
        _, even = kcast.synth("mixtral-8x7b", gpus=["H100-SXM"], **opts)
        _, skewed = kcast.synth("mixtral-8x7b", gpus=["H100-SXM"], moe_load_imbalance=1.5, **opts)
        _, padded = kcast.synth("mixtral-8x7b", gpus=["H100-SXM"], moe_expert_capacity_factor=1,
                                moe_pad_expert_input_to_capacity=True, **opts)
        self.assertEqual(skewed[0]["routing"], "imbalanced")
        self.assertEqual(skewed[0]["moe_load_imbalance"], 1.5)
        self.assertGreater(skewed[0]["step_s"], even[0]["step_s"])
        self.assertEqual(padded[0]["routing"], "capacity")
        self.assertEqual(padded[0]["moe_expert_capacity_factor"], 1)
        self.assertTrue(padded[0]["moe_pad_expert_input_to_capacity"])
        self.assertIsNone(even[0]["moe_expert_capacity_factor"])
        with self.assertRaisesRegex(kcast.KcastError, "option '--moe-load-imbalance'"):
            kcast.synth("mixtral-8x7b", moe_load_imbalance=9, **opts)


class Fp8ParametersTest(unittest.TestCase):
    def test_fp8_param_gather_is_the_clis_flag_and_lowers_the_memory(self):
        opts = dict(mode="train", batch=16, seq=2048, dtype="fp8", recipe="current", attention="flash",
                    framework="megatron", master_weights=True, dp=8, zero=1, microbatches=2)
        _, with_fp8 = kcast.synth("llama3-8b", gpus=["H100-SXM"], fp8_param_gather=True, **opts)
        _, without = kcast.synth("llama3-8b", gpus=["H100-SXM"], **opts)
        expected = cli_json("synth", "llama3-8b", "--mode", "train", "--batch", 16, "--seq", 2048, "--dtype", "fp8",
                            "--recipe", "current", "--attention", "flash", "--framework", "megatron",
                            "--master-weights", "--dp", 8, "--zero", 1, "--microbatches", 2, "--fp8-param-gather",
                            "--gpu", "H100-SXM", "--format", "json", "-o", os.devnull)
        self.assertEqual(with_fp8, expected)
        self.assertLess(with_fp8[0]["memory_gb"], without[0]["memory_gb"])
        self.assertEqual(with_fp8[0]["step_s"], without[0]["step_s"])


class RecomputeModulesTest(unittest.TestCase):
    def test_a_module_list_is_the_clis_flag_and_lowers_the_memory(self):
        opts = dict(mode="train", batch=64, seq=4096, dtype="fp8", recipe="mxfp8", attention="flash",
                    framework="megatron", master_weights=True, pp=16, dp=16, ep=8, etp=1, microbatches=4)
        _, with_modules = kcast.synth("deepseek-v3", gpus=["B200"], recompute_modules=["mla_up_proj", "moe_act"], **opts)
        _, without = kcast.synth("deepseek-v3", gpus=["B200"], **opts)
        expected = cli_json("synth", "deepseek-v3", "--mode", "train", "--batch", 64, "--seq", 4096, "--dtype", "fp8",
                            "--recipe", "mxfp8", "--attention", "flash", "--framework", "megatron", "--master-weights",
                            "--pp", 16, "--dp", 16, "--ep", 8, "--etp", 1, "--microbatches", 4,
                            "--recompute-modules", "mla_up_proj,moe_act", "--gpu", "B200", "--format", "json",
                            "-o", os.devnull)
        self.assertEqual(with_modules, expected)
        self.assertLess(with_modules[0]["memory_gb"], without[0]["memory_gb"])
        self.assertGreater(with_modules[0]["recompute_s"], without[0]["recompute_s"])
        with self.assertRaises(kcast.KcastError) as e:
            kcast.synth("llama3-8b", gpus=["B200"], recompute_modules=["mla_up_proj"], **dict(opts, ep=1, etp=None))
        self.assertIn("--recompute-modules", str(e.exception))


class PredictTest(unittest.TestCase):
    def test_predict_and_whatif_return_the_clis_json(self):
        lst = kcast.synth("llama2-7b", mode="decode", batch=4, seq=512)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.csv")
            lst.to_csv(path)
            self.assertEqual(kcast.predict(lst, gpus=["H100-SXM", "L4"], mode="absolute"),
                             cli_json("predict", "--kernels", path, "--gpu", "H100-SXM,L4", "--mode", "absolute",
                                      "--format", "json"))
            self.assertEqual(kcast.whatif(path, gpu="H100-SXM", scale={"dram_bw": 2}),
                             cli_json("whatif", "--kernels", path, "--gpu", "H100-SXM", "--format", "json", "--scale",
                                      "dram_bw=2"))
            self.assertEqual(len(kcast.read_kernels(path)), len(lst))

    def test_a_bad_kernel_list_names_file_and_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.csv")
            with open(path, "w") as f:
                f.write("name,class,flops\nk,gemm,lots\n")
            with self.assertRaises(kcast.KcastError) as e:
                kcast.read_kernels(path)
            self.assertIn("bad.csv:2", str(e.exception))


def measurements(d):
    """Streaming kernels measured on two GPUs with bandwidth-proportional times (as validate_cli_test)."""
    path = os.path.join(d, "meas.csv")
    with open(path, "w") as f:
        f.write("name,class,bytes,duration_us,gpu,context\n")
        for i in range(1, 31):
            b = 1e6 * i * i
            f.write(f"copy{i},elementwise,{b},{10 + b / 1.3e6},A100-SXM4-80GB,rig\n")
            f.write(f"copy{i},elementwise,{b},{10 + b / 0.7e6},V100-SXM2-32GB,rig\n")
    return path


class ImportCalibrateValidateTest(unittest.TestCase):
    def test_import_trace_writes_what_the_cli_writes(self):
        trace = os.path.join(SOURCE, "tests", "data", "import", "nsys_cuda_gpu_trace.csv")
        with tempfile.TemporaryDirectory() as d:
            mine, theirs = os.path.join(d, "py.csv"), os.path.join(d, "cli.csv")
            kcast.import_trace(trace, fmt="nsys-csv").to_csv(mine)
            rc, _, err = cli("import", trace, "--from", "nsys-csv", "-o", theirs)
            self.assertEqual(rc, 0, err)
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                self.assertEqual(a.read(), b.read())

    def test_validate_and_calibrate_as_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            meas = measurements(d)
            self.assertEqual(kcast.validate([meas], holdout_gpu="V100-SXM2-32GB", summary=True),
                             cli_json("validate", "--measurements", meas, "--holdout-gpu", "V100-SXM2-32GB",
                                      "--summary", "--format", "json"))
            mine = kcast.calibrate([meas], output=os.path.join(d, "py.json"))
            rc, _, err = cli("calibrate", "--measurements", meas, "-o", os.path.join(d, "cli.json"))
            self.assertEqual(rc, 0, err)
            with open(os.path.join(d, "cli.json")) as f:
                theirs = json.load(f)
            # The fitted model is the same; only the fit's wall time and the output's path may differ.
            self.assertEqual(mine["params"], theirs["params"])
            self.assertEqual(mine["gpus"], theirs["gpus"])
            self.assertEqual(mine["fit"]["per_class_gpu"], theirs["fit"]["per_class_gpu"])

    def test_a_missing_file_names_it(self):
        with self.assertRaises(kcast.KcastError) as e:
            kcast.validate(["/nonexistent/measured.csv"])
        self.assertIn("/nonexistent/measured.csv", str(e.exception))


class ServeTest(unittest.TestCase):
    def test_serve_returns_the_clis_json(self):
        mine = kcast.serve("llama3-8b", gpus=["H100-SXM"], input_tokens=256, output_tokens=32,
                           concurrency=[1, 4], requests=20)
        theirs = cli_json("serve", "llama3-8b", "--gpu", "H100-SXM", "--input-tokens", 256, "--output-tokens", 32,
                          "--concurrency", "1,4", "--requests", 20, "--format", "json")
        self.assertEqual(mine, theirs)
        self.assertEqual([p["concurrency"] for p in mine], [1, 4])

    def test_serve_speculative_decoding_from_keywords(self):
        plain = kcast.serve("llama3-8b", gpus="H100-SXM", input_tokens=256, output_tokens=32, concurrency=1,
                            requests=4)
        drafted = kcast.serve("llama3-8b", gpus="H100-SXM", input_tokens=256, output_tokens=32, concurrency=1,
                              requests=4, speculative_tokens=3, acceptance=0.9)
        self.assertEqual((drafted["speculative_tokens"], drafted["acceptance"]), (3, 0.9))
        self.assertEqual((plain["speculative_tokens"], plain["acceptance"]), (0, None))
        self.assertLess(drafted["itl_ms"]["mean"], plain["itl_ms"]["mean"])
        with self.assertRaises(kcast.KcastError) as e:
            kcast.serve("llama3-8b", gpus="H100-SXM", input_tokens=256, output_tokens=32, concurrency=1,
                        acceptance=0.9)
        self.assertIn("'--acceptance'", str(e.exception))


class PlanTest(unittest.TestCase):
    def test_plan_returns_the_clis_json(self):
        mine = kcast.plan("train", "llama3-8b", gpu="H100-SXM", gpus=8, batch=32, seq=2048, top=3, fix="tp=2")
        theirs = cli_json("plan", "train", "llama3-8b", "--gpu", "H100-SXM", "--gpus", 8, "--batch", 32, "--seq", 2048,
                          "--top", 3, "--fix", "tp=2", "--format", "json")
        self.assertEqual(mine, theirs)
        self.assertTrue(all(c["tp"] == 2 for c in mine))

    def test_plan_serve_under_a_request_rate_with_disaggregated_splits(self):
        mine = kcast.plan("serve", "llama3-8b", gpu="H100-SXM", gpus=2, input_tokens=1024, output_tokens=64,
                          slo_ttft=300, slo_itl=20, load="request-rate", requests=50, top=20)
        theirs = cli_json("plan", "serve", "llama3-8b", "--gpu", "H100-SXM", "--gpus", 2, "--input-tokens", 1024,
                          "--output-tokens", 64, "--slo-ttft", 300, "--slo-itl", 20, "--load", "request-rate",
                          "--requests", 50, "--top", 20, "--format", "json")
        self.assertEqual(mine, theirs)
        self.assertTrue(all(c["request_rate"] is not None and c["concurrency"] is None for c in mine))
        split = [c for c in mine if c["disaggregated"]]
        self.assertTrue(split)
        self.assertTrue(all(c["prefill_workers"] * c["prefill_tp"] + c["decode_workers"] * c["decode_tp"] == 2
                            for c in split))


class ThreadsTest(unittest.TestCase):
    def test_commands_on_threads_keep_their_own_output(self):
        results = {}

        def work(i):
            results[i] = kcast.synth("llama3-8b", gpus=["H100-SXM"], batch=1 + i, seq=128)[1]

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(4):
            self.assertEqual(results[i], kcast.synth("llama3-8b", gpus=["H100-SXM"], batch=1 + i, seq=128)[1])
        self.assertLess(results[0][0]["step_s"], results[3][0]["step_s"])


if __name__ == "__main__":
    unittest.main()
