"""Architectures the extra zoo defines itself, not torchvision's: the graphs
vision and sensor pipelines bring beyond classifiers and detectors
(recurrent recognisers, a YOLOv4-style detector with Mish, encoder-decoders
with transposed convolutions and skip connections, sub-pixel upsampling,
attention over a sequence with a causal mask, 1-D convolutions on a
waveform, heatmap heads, token-mixing MLPs, a generator from a latent
vector; then style transfer with InstanceNorm, DETR's cross-attention,
MobileViT's patch unfolding, HRNet's multi-resolution exchange, GroupNorm
heads and residual streams (FCOS, PoolFormer, a diffusion UNet), a Whisper-
style audio encoder, SegFormer, ConvNeXt V2's GRN, a GridSample flow warp). Each is small, built from plain
torch.nn layers, and exported like the rest (make_zoo.py: random seeded
weights, opset 17, dynamic batch axis).

SHAPES: name -> one sample's input shape; build(torch, torchvision, name)
-> (module, output names)."""

SHAPES = {
    "crnn_bilstm": (3, 32, 128),
    "unet_small": (3, 128, 128),
    "espcn_x3": (3, 64, 64),
    "transformer_causal": (64, 96),
    "conv1d_gru_audio": (1, 8000),
    "pose_deconv_resnet18": (3, 256, 192),
    "mlp_mixer_small": (3, 224, 224),
    "dcgan_generator": (100, 1, 1),
    "csp_mish_detector": (3, 256, 256),
    "style_transfer": (3, 256, 256),
    "detr_small": (3, 256, 256),
    "mobilevit_small": (3, 256, 256),
    "hrnet_small": (3, 256, 192),
    "fcos_gn_head": (3, 320, 320),
    "whisper_encoder_small": (80, 400),
    "segformer_small": (3, 256, 256),
    "convnext_v2_grn": (3, 224, 224),
    "poolformer_small": (3, 224, 224),
    "diffusion_unet_small": (4, 32, 32),
    "flow_warp_gridsample": (6, 128, 160),
}


def build(torch, torchvision, name):
    nn = torch.nn

    def conv_bn_relu(cin, cout, kernel=3):
        return [nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    class Crnn(nn.Module):
        """CRNN's shape: VGG-like convolutions down to a height of 1, the
        width as the sequence of a 2-layer bidirectional LSTM (torch exports
        one LSTM node a layer, its zero initial states expanded to the run's
        batch), a linear classifier per step."""
        def __init__(self, classes=37, hidden=96):
            super().__init__()
            layers, channels = [], 3
            for out, pool in ((32, (2, 2)), (64, (2, 2)), (128, (2, 1)), (128, (4, 1))):
                layers += [nn.Conv2d(channels, out, 3, padding=1), nn.BatchNorm2d(out),
                           nn.ReLU(), nn.MaxPool2d(pool, pool)]
                channels = out
            self.features = nn.Sequential(*layers)
            self.rnn = nn.LSTM(channels, hidden, num_layers=2, bidirectional=True)
            self.classifier = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            sequence = self.features(x).squeeze(2).permute(2, 0, 1)  # [W, N, C]
            return self.classifier(self.rnn(sequence)[0]).permute(1, 0, 2)

    class UNet(nn.Module):
        """Four levels down (max pooling), up again by 2x2 transposed
        convolutions whose output is concatenated with the level's skip."""
        def __init__(self, widths=(16, 32, 64, 128), classes=4):
            super().__init__()
            self.down, channels = nn.ModuleList(), 3
            for width in widths:
                self.down.append(nn.Sequential(*conv_bn_relu(channels, width),
                                               *conv_bn_relu(width, width)))
                channels = width
            self.ups, self.up_blocks = nn.ModuleList(), nn.ModuleList()
            for width in reversed(widths[:-1]):
                self.ups.append(nn.ConvTranspose2d(channels, width, 2, stride=2))
                self.up_blocks.append(nn.Sequential(*conv_bn_relu(2 * width, width),
                                                    *conv_bn_relu(width, width)))
                channels = width
            self.head = nn.Conv2d(channels, classes, 1)

        def forward(self, x):
            skips = []
            for level, block in enumerate(self.down):
                x = block(x if level == 0 else nn.functional.max_pool2d(x, 2))
                skips.append(x)
            for up, block, skip in zip(self.ups, self.up_blocks, reversed(skips[:-1])):
                x = block(torch.cat([up(x), skip], 1))
            return self.head(x)

    class Espcn(nn.Module):
        """Sub-pixel super-resolution: tanh convolutions, then PixelShuffle
        (DepthToSpace, CRD) to three times the size."""
        def __init__(self, scale=3):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 64, 5, padding=2), nn.Tanh(),
                                      nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                      nn.Conv2d(32, 3 * scale * scale, 3, padding=1),
                                      nn.PixelShuffle(scale), nn.Sigmoid())

        def forward(self, x):
            return self.body(x)

    class CausalTransformer(nn.Module):
        """A sequence of feature vectors ([N, 64, 96]) through a linear
        embedding with learned positions and two pre-norm encoder layers
        under a causal mask (a constant -inf triangle added before Softmax),
        GELU feed-forward, then the last step's classification."""
        def __init__(self, steps=64, features=96, width=128, classes=10):
            super().__init__()
            self.embed = nn.Linear(features, width)
            self.position = nn.Parameter(torch.randn(1, steps, width) * 0.1)
            layer = nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2)
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, classes)
            self.register_buffer("mask", torch.triu(torch.full((steps, steps), float("-inf")),
                                                    diagonal=1))

        def forward(self, x):
            x = self.encoder(self.embed(x) + self.position, mask=self.mask)
            return self.head(self.norm(x[:, -1]))

    class AudioGru(nn.Module):
        """A waveform ([N, 1, 8000]) through strided 1-D convolutions
        (GroupNorm and GELU, as wav2vec's feature encoder), then a GRU over
        the frames (batch first) and a per-frame classifier."""
        def __init__(self, classes=12):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv1d(1, 32, 10, stride=5, bias=False), nn.GroupNorm(32, 32), nn.GELU(),
                nn.Conv1d(32, 64, 3, stride=2, bias=False), nn.GELU(),
                nn.Conv1d(64, 64, 3, stride=2, bias=False), nn.GELU(),
                nn.Conv1d(64, 64, 2, stride=2, bias=False), nn.GELU())
            self.norm = nn.LayerNorm(64)
            self.rnn = nn.GRU(64, 64, batch_first=True)
            self.head = nn.Linear(64, classes)

        def forward(self, x):
            frames = self.norm(self.features(x).transpose(1, 2))
            return self.head(self.rnn(frames)[0])

    class PoseDeconv(nn.Module):
        """SimpleBaseline's shape: a ResNet-18 backbone, three 4x4 stride-2
        transposed convolutions, a 1x1 convolution to 17 keypoint heatmaps."""
        def __init__(self, keypoints=17):
            super().__init__()
            resnet = torchvision.models.resnet18(weights=None)
            self.backbone = nn.Sequential(*list(resnet.children())[:-2])
            layers, channels = [], 512
            for _ in range(3):
                layers += [nn.ConvTranspose2d(channels, 256, 4, stride=2, padding=1, bias=False),
                           nn.BatchNorm2d(256), nn.ReLU()]
                channels = 256
            self.head = nn.Sequential(*layers, nn.Conv2d(256, keypoints, 1))

        def forward(self, x):
            return self.head(self.backbone(x))

    class MixerBlock(nn.Module):
        def __init__(self, tokens, width):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.tokens = nn.Sequential(nn.Linear(tokens, 2 * tokens), nn.GELU(),
                                        nn.Linear(2 * tokens, tokens))
            self.channels = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                          nn.Linear(4 * width, width))

        def forward(self, x):  # [N, tokens, width]
            x = x + self.tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
            return x + self.channels(self.norm2(x))

    class Mixer(nn.Module):
        """MLP-Mixer: 16x16 patches, blocks mixing across tokens (a Linear
        on the transposed tokens) and across channels, mean over tokens."""
        def __init__(self, width=128, blocks=4, classes=100):
            super().__init__()
            self.patches = nn.Conv2d(3, width, 16, stride=16)
            self.blocks = nn.Sequential(*[MixerBlock(196, width) for _ in range(blocks)])
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, classes)

        def forward(self, x):
            x = self.patches(x).flatten(2).transpose(1, 2)
            return self.head(self.norm(self.blocks(x)).mean(1))

    class Generator(nn.Module):
        """DCGAN's generator: a latent vector ([N, 100, 1, 1]) up to a 32x32
        image by transposed convolutions, BatchNorm, ReLU, Tanh."""
        def __init__(self, latent=100):
            super().__init__()
            layers, channels = [], latent
            for out, stride, pad in ((256, 1, 0), (128, 2, 1), (64, 2, 1)):
                layers += [nn.ConvTranspose2d(channels, out, 4, stride, pad, bias=False),
                           nn.BatchNorm2d(out), nn.ReLU()]
                channels = out
            self.body = nn.Sequential(*layers, nn.ConvTranspose2d(channels, 3, 4, 2, 1),
                                      nn.Tanh())

        def forward(self, x):
            return self.body(x)

    def conv_bn_mish(cin, cout, kernel=3, stride=1):
        return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, bias=False),
                             nn.BatchNorm2d(cout), nn.Mish())

    class CspStage(nn.Module):
        """A CSPDarknet stage: a strided convolution, the channels split in
        two branches (one through residual blocks), concatenated again."""
        def __init__(self, cin, cout, blocks):
            super().__init__()
            self.down = conv_bn_mish(cin, cout, 3, 2)
            self.part1, self.part2 = conv_bn_mish(cout, cout // 2, 1), conv_bn_mish(cout, cout // 2, 1)
            self.blocks = nn.ModuleList(nn.Sequential(conv_bn_mish(cout // 2, cout // 2, 1),
                                                      conv_bn_mish(cout // 2, cout // 2, 3))
                                        for _ in range(blocks))
            self.merge = conv_bn_mish(cout, cout, 1)

        def forward(self, x):
            x = self.down(x)
            a, b = self.part1(x), self.part2(x)
            for block in self.blocks:
                b = b + block(b)
            return self.merge(torch.cat([a, b], 1))

    class CspMish(nn.Module):
        """YOLOv4's shape at a small width: CSPDarknet stages with Mish
        (exported at opset 17 as Softplus, Tanh and Mul), SPP (max pooling
        5, 9 and 13 concatenated), a nearest upsample and concatenation
        with the previous stage, two 1x1 heads."""
        def __init__(self, outputs=3 * 85):
            super().__init__()
            self.stem = conv_bn_mish(3, 16)
            self.stages = nn.ModuleList([CspStage(16, 32, 1), CspStage(32, 64, 2),
                                         CspStage(64, 128, 2), CspStage(128, 256, 1)])
            self.spp_in = conv_bn_mish(256, 128, 1)
            self.spp_out = conv_bn_mish(512, 256, 1)
            self.reduce = conv_bn_mish(256, 128, 1)
            self.fuse = conv_bn_mish(256, 128, 3)
            self.head_small, self.head_large = nn.Conv2d(256, outputs, 1), nn.Conv2d(128, outputs, 1)

        def forward(self, x):
            x = self.stem(x)
            features = []
            for stage in self.stages:
                x = stage(x)
                features.append(x)
            x = self.spp_in(x)
            x = self.spp_out(torch.cat([x] + [nn.functional.max_pool2d(x, k, 1, k // 2)
                                              for k in (5, 9, 13)], 1))
            up = nn.functional.interpolate(self.reduce(x), scale_factor=2.0, mode="nearest")
            large = self.fuse(torch.cat([up, features[-2]], 1))
            return self.head_small(x), self.head_large(large)

    class StyleTransfer(nn.Module):
        """Johnson et al.'s fast style transfer: reflection padding (Pad,
        reflect), InstanceNorm after every convolution, five residual blocks
        at a quarter of the size, nearest upsampling back, a 9x9 output
        convolution."""
        def __init__(self):
            super().__init__()

            def conv(cin, cout, kernel, stride=1, norm=True):
                layers = [nn.ReflectionPad2d(kernel // 2), nn.Conv2d(cin, cout, kernel, stride)]
                return layers + ([nn.InstanceNorm2d(cout, affine=True), nn.ReLU()] if norm else [])
            self.down = nn.Sequential(*conv(3, 32, 9), *conv(32, 64, 3, 2), *conv(64, 128, 3, 2))
            self.res = nn.ModuleList(nn.Sequential(*conv(128, 128, 3), *conv(128, 128, 3)[:3])
                                     for _ in range(5))
            self.up = nn.Sequential(nn.Upsample(scale_factor=2.0, mode="nearest"),
                                    *conv(128, 64, 3),
                                    nn.Upsample(scale_factor=2.0, mode="nearest"),
                                    *conv(64, 32, 3), *conv(32, 3, 9, norm=False))

        def forward(self, x):
            x = self.down(x)
            for block in self.res:
                x = x + block(x)
            return self.up(x)

    class Detr(nn.Module):
        """DETR's shape at a small width: a ResNet-18 backbone to stride 32,
        a 1x1 projection, the feature map flattened to a sequence with
        sine positions, nn.Transformer (2 encoder, 2 decoder layers, cross-
        attention from 50 learned queries), class logits and sigmoid boxes."""
        def __init__(self, width=128, queries=50, classes=92):
            super().__init__()
            resnet = torchvision.models.resnet18(weights=None)
            self.backbone = nn.Sequential(*list(resnet.children())[:-2])
            self.project = nn.Conv2d(512, width, 1)
            self.transformer = nn.Transformer(width, 4, 2, 2, 4 * width, dropout=0.0,
                                              batch_first=True)
            self.queries = nn.Parameter(torch.randn(1, queries, width) * 0.1)
            self.classes = nn.Linear(width, classes)
            self.boxes = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4))
            self.width = width

        def forward(self, x):
            f = self.project(self.backbone(x))  # [N, C, H, W]
            n, c, h, w = f.shape
            ys = torch.arange(h, dtype=torch.float32).unsqueeze(1).expand(h, w)
            xs = torch.arange(w, dtype=torch.float32).unsqueeze(0).expand(h, w)
            freq = torch.exp(torch.arange(c // 4, dtype=torch.float32) * (-4.0 / (c // 4)))
            angles = torch.cat([ys.reshape(-1, 1) * freq, xs.reshape(-1, 1) * freq], 1)
            position = torch.cat([angles.sin(), angles.cos()], 1)  # [H*W, C]
            memory = f.flatten(2).transpose(1, 2) + position
            hs = self.transformer(memory, self.queries.expand(n, -1, -1))
            return self.classes(hs), self.boxes(hs).sigmoid()

    class MobileVitBlock(nn.Module):
        """Local 3x3 and 1x1 convolutions, the map unfolded into 2x2
        patches (Reshape/Transpose), a transformer over the patches of each
        pixel position, folded back, fused with the input (concat, 3x3)."""
        def __init__(self, channels, width, layers=2):
            super().__init__()
            self.local = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.SiLU(),
                                       nn.Conv2d(channels, width, 1))
            layer = nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.transformer = nn.TransformerEncoder(layer, layers)
            self.back = nn.Conv2d(width, channels, 1)
            self.fuse = nn.Sequential(nn.Conv2d(2 * channels, channels, 3, padding=1), nn.SiLU())

        def forward(self, x):
            y = self.local(x)
            n, c, h, w = y.shape
            patches = y.reshape(n, c, h // 2, 2, w // 2, 2).permute(0, 3, 5, 2, 4, 1)
            patches = patches.reshape(n * 4, (h // 2) * (w // 2), c)
            patches = self.transformer(patches)
            y = patches.reshape(n, 2, 2, h // 2, w // 2, c).permute(0, 5, 3, 1, 4, 2)
            y = self.back(y.reshape(n, c, h, w))
            return self.fuse(torch.cat([x, y], 1))

    class MobileVit(nn.Module):
        """MobileViT's shape: inverted residual blocks (SiLU) down to
        stride 8, MobileViT blocks at strides 8, 16 and 32, a classifier."""
        def __init__(self, classes=100):
            super().__init__()

            def inverted(cin, cout, stride):
                return nn.Sequential(nn.Conv2d(cin, 2 * cin, 1), nn.BatchNorm2d(2 * cin), nn.SiLU(),
                                     nn.Conv2d(2 * cin, 2 * cin, 3, stride, 1, groups=2 * cin),
                                     nn.BatchNorm2d(2 * cin), nn.SiLU(),
                                     nn.Conv2d(2 * cin, cout, 1), nn.BatchNorm2d(cout))
            self.body = nn.Sequential(
                nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), inverted(16, 24, 2), inverted(24, 48, 2),
                MobileVitBlock(48, 64), inverted(48, 64, 2), MobileVitBlock(64, 80),
                inverted(64, 80, 2), MobileVitBlock(80, 96), nn.Conv2d(80, 320, 1), nn.SiLU())
            self.head = nn.Linear(320, classes)

        def forward(self, x):
            return self.head(self.body(x).mean((2, 3)))

    def basic_block(channels):
        return nn.Sequential(*conv_bn_relu(channels, channels), nn.Conv2d(channels, channels, 3,
                                                                         padding=1, bias=False),
                             nn.BatchNorm2d(channels))

    class HrNet(nn.Module):
        """HRNet's shape: branches at strides 4, 8 and 16 kept in parallel,
        exchanging after each stage (strided 3x3 convolutions down,
        1x1 convolutions and bilinear upsampling up, summed), 17 heatmaps
        from the highest resolution."""
        def __init__(self, widths=(32, 64, 128), keypoints=17):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.Conv2d(64, widths[0], 3, 2, 1), nn.BatchNorm2d(widths[0]),
                                      nn.ReLU())
            self.widths = widths
            self.branches = nn.ModuleList(nn.ModuleList(basic_block(w) for w in widths)
                                          for _ in range(3))
            self.exchange = nn.ModuleList()
            for _ in range(3):
                pairs = nn.ModuleDict()
                for i, wi in enumerate(widths):
                    for j, wj in enumerate(widths):
                        if j > i:  # lower resolution to higher
                            pairs[f"{j}to{i}"] = nn.Sequential(nn.Conv2d(wj, wi, 1, bias=False),
                                                               nn.BatchNorm2d(wi))
                        elif j < i:
                            steps = [nn.Conv2d(wj if s == 0 else wi, wi, 3, 2, 1, bias=False)
                                     for s in range(i - j)]
                            pairs[f"{j}to{i}"] = nn.Sequential(*steps, nn.BatchNorm2d(wi))
                self.exchange.append(pairs)
            self.down = nn.ModuleList(nn.Sequential(nn.Conv2d(widths[i], widths[i + 1], 3, 2, 1),
                                                    nn.BatchNorm2d(widths[i + 1]), nn.ReLU())
                                      for i in range(len(widths) - 1))
            self.head = nn.Conv2d(widths[0], keypoints, 1)

        def forward(self, x):
            x = self.stem(x)
            xs = [x]
            for down in self.down:
                xs.append(down(xs[-1]))
            for stage in range(3):
                xs = [block(x) + x for block, x in zip(self.branches[stage], xs)]
                fused = []
                for i in range(len(xs)):
                    total = xs[i]
                    for j in range(len(xs)):
                        if j == i:
                            continue
                        y = self.exchange[stage][f"{j}to{i}"](xs[j])
                        if j > i:
                            y = nn.functional.interpolate(y, scale_factor=float(2 ** (j - i)),
                                                          mode="bilinear", align_corners=False)
                        total = total + y
                    fused.append(torch.relu(total))
                xs = fused
            return self.head(xs[0])

    class FcosHead(nn.Module):
        """FCOS's shape: a ResNet-18 backbone, an FPN (1x1 laterals, nearest
        upsampling, 3x3 outputs) over strides 8 to 32, and per level
        classification and box towers of 3x3 convolutions with GroupNorm
        (32 groups: exported as Reshape, InstanceNormalization, Reshape,
        Mul and Add), sigmoid centerness."""
        def __init__(self, width=128, classes=80):
            super().__init__()
            resnet = torchvision.models.resnet18(weights=None)
            self.stem = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool,
                                      resnet.layer1, resnet.layer2)
            self.c4, self.c5 = resnet.layer3, resnet.layer4
            self.laterals = nn.ModuleList(nn.Conv2d(c, width, 1) for c in (128, 256, 512))
            self.outputs = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1) for _ in range(3))

            def tower():
                layers = []
                for _ in range(2):
                    layers += [nn.Conv2d(width, width, 3, padding=1), nn.GroupNorm(32, width),
                               nn.ReLU()]
                return nn.Sequential(*layers)
            self.cls_tower, self.box_tower = tower(), tower()
            self.cls = nn.Conv2d(width, classes, 3, padding=1)
            self.box = nn.Conv2d(width, 4, 3, padding=1)
            self.centerness = nn.Conv2d(width, 1, 3, padding=1)

        def forward(self, x):
            c3 = self.stem(x)
            c4 = self.c4(c3)
            c5 = self.c5(c4)
            p5 = self.laterals[2](c5)
            p4 = self.laterals[1](c4) + nn.functional.interpolate(p5, scale_factor=2.0)
            p3 = self.laterals[0](c3) + nn.functional.interpolate(p4, scale_factor=2.0)
            cls, box, ctr = [], [], []
            for level, p in enumerate((p3, p4, p5)):
                p = self.outputs[level](p)
                c, b = self.cls_tower(p), self.box_tower(p)
                cls.append(self.cls(c).flatten(2))
                box.append(torch.relu(self.box(b)).flatten(2))
                ctr.append(self.centerness(b).sigmoid().flatten(2))
            return torch.cat(cls, 2), torch.cat(box, 2), torch.cat(ctr, 2)

    class WhisperEncoder(nn.Module):
        """Whisper's encoder at a small width: a log-mel spectrogram
        ([N, 80, 400]) through two GELU 1-D convolutions (the second
        strided), fixed sinusoidal positions, pre-norm encoder layers
        (GELU feed-forward), a final LayerNorm."""
        def __init__(self, mels=80, frames=400, width=192, layers=3):
            super().__init__()
            self.conv1 = nn.Conv1d(mels, width, 3, padding=1)
            self.conv2 = nn.Conv1d(width, width, 3, stride=2, padding=1)
            steps = frames // 2
            scales = torch.exp(-torch.arange(width // 2) * (9.21 / (width // 2 - 1)))
            angles = torch.arange(steps).unsqueeze(1) * scales.unsqueeze(0)
            self.register_buffer("position", torch.cat([angles.sin(), angles.cos()], 1))
            layer = nn.TransformerEncoderLayer(width, 6, 4 * width, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.norm = nn.LayerNorm(width)

        def forward(self, x):
            x = nn.functional.gelu(self.conv2(nn.functional.gelu(self.conv1(x))))
            return self.norm(self.encoder(x.transpose(1, 2) + self.position))

    class EfficientAttention(nn.Module):
        """SegFormer's attention: keys and values from the map reduced by a
        strided convolution and LayerNorm (sequence reduction ratio r)."""
        def __init__(self, width, heads, reduction):
            super().__init__()
            self.heads, self.reduction = heads, reduction
            self.q, self.kv = nn.Linear(width, width), nn.Linear(width, 2 * width)
            self.project = nn.Linear(width, width)
            if reduction > 1:
                self.reduce = nn.Conv2d(width, width, reduction, reduction)
                self.norm = nn.LayerNorm(width)

        def forward(self, x, h, w):
            n, length, c = x.shape
            q = self.q(x).reshape(n, length, self.heads, c // self.heads).transpose(1, 2)
            kv = x
            if self.reduction > 1:
                kv = self.norm(self.reduce(x.transpose(1, 2).reshape(n, c, h, w))
                               .flatten(2).transpose(1, 2))
            k, v = self.kv(kv).reshape(n, -1, 2, self.heads, c // self.heads) \
                .permute(2, 0, 3, 1, 4)
            attention = (q @ k.transpose(-2, -1) * (c // self.heads) ** -0.5).softmax(-1)
            return self.project((attention @ v).transpose(1, 2).reshape(n, length, c))

    class MixFfn(nn.Module):
        """Linear, a depthwise 3x3 convolution on the tokens laid out as
        the map (positional information without embeddings), GELU, Linear."""
        def __init__(self, width):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.depthwise = nn.Conv2d(4 * width, 4 * width, 3, padding=1, groups=4 * width)

        def forward(self, x, h, w):
            n, length, _ = x.shape
            x = self.fc1(x)
            x = self.depthwise(x.transpose(1, 2).reshape(n, -1, h, w)).flatten(2).transpose(1, 2)
            return self.fc2(nn.functional.gelu(x))

    class SegformerBlock(nn.Module):
        def __init__(self, width, heads, reduction):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attention = EfficientAttention(width, heads, reduction)
            self.ffn = MixFfn(width)

        def forward(self, x, h, w):
            x = x + self.attention(self.norm1(x), h, w)
            return x + self.ffn(self.norm2(x), h, w)

    class Segformer(nn.Module):
        """SegFormer-B0's shape: overlapping patch embeddings (strided
        convolutions) to four stages at strides 4 to 32, blocks of
        efficient attention and Mix-FFN, an all-MLP decoder (1x1 projections,
        bilinear upsampling to stride 4, concatenation, fusion), class logits."""
        def __init__(self, widths=(32, 64, 160, 256), heads=(1, 2, 5, 8),
                     reductions=(8, 4, 2, 1), classes=19):
            super().__init__()
            self.embeds, self.blocks, self.norms = nn.ModuleList(), nn.ModuleList(), \
                nn.ModuleList()
            channels = 3
            for i, width in enumerate(widths):
                kernel, stride = (7, 4) if i == 0 else (3, 2)
                self.embeds.append(nn.Conv2d(channels, width, kernel, stride, kernel // 2))
                self.blocks.append(nn.ModuleList(SegformerBlock(width, heads[i], reductions[i])
                                                 for _ in range(2)))
                self.norms.append(nn.LayerNorm(width))
                channels = width
            self.decode = nn.ModuleList(nn.Conv2d(width, 128, 1) for width in widths)
            self.fuse = nn.Sequential(nn.Conv2d(4 * 128, 128, 1, bias=False), nn.BatchNorm2d(128),
                                      nn.ReLU())
            self.classify = nn.Conv2d(128, classes, 1)

        def forward(self, x):
            features = []
            for embed, blocks, norm in zip(self.embeds, self.blocks, self.norms):
                x = embed(x)
                n, c, h, w = x.shape
                tokens = x.flatten(2).transpose(1, 2)
                for block in blocks:
                    tokens = block(tokens, h, w)
                x = norm(tokens).transpose(1, 2).reshape(n, c, h, w)
                features.append(x)
            size = features[0].shape[2:]
            decoded = [nn.functional.interpolate(project(f), size=size, mode="bilinear",
                                                 align_corners=False)
                       for project, f in zip(self.decode, features)]
            return self.classify(self.fuse(torch.cat(decoded[::-1], 1)))

    class GlobalResponseNorm(nn.Module):
        """ConvNeXt V2's GRN on channels-last maps: each channel's L2 norm
        over the map, divided by their mean over channels, scales the input."""
        def __init__(self, width):
            super().__init__()
            self.gamma = nn.Parameter(torch.randn(1, 1, 1, width) * 0.1)
            self.beta = nn.Parameter(torch.randn(1, 1, 1, width) * 0.1)

        def forward(self, x):
            g = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
            n = g / (g.mean(dim=-1, keepdim=True) + 1e-6)
            return self.gamma * (x * n) + self.beta + x

    class ConvNextV2Block(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.depthwise = nn.Conv2d(width, width, 7, padding=3, groups=width)
            self.norm = nn.LayerNorm(width)
            self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.grn = GlobalResponseNorm(4 * width)

        def forward(self, x):
            y = self.norm(self.depthwise(x).permute(0, 2, 3, 1))
            y = self.fc2(self.grn(nn.functional.gelu(self.fc1(y))))
            return x + y.permute(0, 3, 1, 2)

    class ConvNextV2(nn.Module):
        """ConvNeXt V2 at a small width: a 4x4 patchify stem, blocks of 7x7
        depthwise convolution, LayerNorm and an inverted MLP with GRN in the
        channels-last permutation, LayerNorm-and-strided-conv downsampling."""
        def __init__(self, widths=(40, 80, 160, 320), depths=(2, 2, 4, 2), classes=100):
            super().__init__()
            self.stem = nn.Conv2d(3, widths[0], 4, 4)
            self.stages, self.downs = nn.ModuleList(), nn.ModuleList()
            for i, width in enumerate(widths):
                if i:
                    self.downs.append(nn.Conv2d(widths[i - 1], width, 2, 2))
                self.stages.append(nn.Sequential(*[ConvNextV2Block(width)
                                                   for _ in range(depths[i])]))
            self.norm = nn.LayerNorm(widths[-1])
            self.head = nn.Linear(widths[-1], classes)

        def forward(self, x):
            x = self.stem(x)
            for i, stage in enumerate(self.stages):
                if i:
                    x = self.downs[i - 1](x)
                x = stage(x)
            return self.head(self.norm(x.mean((2, 3))))

    class PoolFormerBlock(nn.Module):
        """PoolFormer's token mixer: average pooling minus the input
        (count_include_pad off), after GroupNorm(1) (LayerNorm over C, H, W),
        then a 1x1-convolution MLP with GELU; layer-scaled residuals."""
        def __init__(self, width):
            super().__init__()
            self.norm1, self.norm2 = nn.GroupNorm(1, width), nn.GroupNorm(1, width)
            self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
            self.mlp = nn.Sequential(nn.Conv2d(width, 4 * width, 1), nn.GELU(),
                                     nn.Conv2d(4 * width, width, 1))
            self.scale1 = nn.Parameter(torch.rand(width, 1, 1))
            self.scale2 = nn.Parameter(torch.rand(width, 1, 1))

        def forward(self, x):
            y = self.norm1(x)
            x = x + self.scale1 * (self.pool(y) - y)
            return x + self.scale2 * self.mlp(self.norm2(x))

    class PoolFormer(nn.Module):
        """PoolFormer-S12's shape at half depth: overlapping patch
        embeddings (7x7 stride 4, then 3x3 stride 2), PoolFormer blocks."""
        def __init__(self, widths=(64, 128, 320, 512), depths=(1, 1, 3, 1), classes=100):
            super().__init__()
            layers, channels = [], 3
            for i, width in enumerate(widths):
                kernel, stride = (7, 4) if i == 0 else (3, 2)
                layers.append(nn.Conv2d(channels, width, kernel, stride, kernel // 2))
                layers += [PoolFormerBlock(width) for _ in range(depths[i])]
                channels = width
            self.body = nn.Sequential(*layers)
            self.norm = nn.GroupNorm(1, channels)
            self.head = nn.Linear(channels, classes)

        def forward(self, x):
            return self.head(self.norm(self.body(x)).mean((2, 3)))

    class DiffusionResBlock(nn.Module):
        """A diffusion UNet's residual block: GroupNorm(32) and SiLU before
        each 3x3 convolution, the timestep embedding added per channel."""
        def __init__(self, cin, cout, time_width):
            super().__init__()
            self.norm1, self.norm2 = nn.GroupNorm(32, cin), nn.GroupNorm(32, cout)
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.time = nn.Linear(time_width, cout)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, t):
            h = self.conv1(nn.functional.silu(self.norm1(x)))
            h = h + self.time(nn.functional.silu(t))[:, :, None, None]
            h = self.conv2(nn.functional.silu(self.norm2(h)))
            return self.skip(x) + h

    class DiffusionAttention(nn.Module):
        """Self-attention over the pixels of a low-resolution map, after
        GroupNorm, with a residual."""
        def __init__(self, width):
            super().__init__()
            self.norm = nn.GroupNorm(32, width)
            self.attention = nn.MultiheadAttention(width, 4, batch_first=True)

        def forward(self, x):
            n, c, h, w = x.shape
            tokens = self.norm(x).flatten(2).transpose(1, 2)
            out = self.attention(tokens, tokens, tokens, need_weights=False)[0]
            return x + out.transpose(1, 2).reshape(n, c, h, w)

    class DiffusionUnet(nn.Module):
        """A latent-diffusion UNet at a small width ([N, 4, 32, 32] latents):
        a fixed timestep (its sinusoidal embedding and MLP computed in the
        graph), residual blocks down to 8x8 with attention there, nearest
        upsampling back with skip concatenations, GroupNorm, SiLU."""
        def __init__(self, widths=(64, 128, 128)):
            super().__init__()
            time_width = 4 * widths[0]
            self.time_mlp = nn.Sequential(nn.Linear(widths[0], time_width), nn.SiLU(),
                                          nn.Linear(time_width, time_width))
            self.stem = nn.Conv2d(4, widths[0], 3, padding=1)
            self.down = nn.ModuleList()
            channels, skips = widths[0], [widths[0]]
            for i, width in enumerate(widths):
                self.down.append(DiffusionResBlock(channels, width, time_width))
                channels = width
                skips.append(width)
            self.pool = nn.AvgPool2d(2)
            self.middle = DiffusionAttention(channels)
            self.up = nn.ModuleList()
            for width in reversed(widths):
                self.up.append(DiffusionResBlock(channels + skips.pop(), width, time_width))
                channels = width
            self.out = nn.Sequential(nn.GroupNorm(32, channels), nn.SiLU(),
                                     nn.Conv2d(channels, 4, 3, padding=1))
            self.width0 = widths[0]

        def forward(self, x):
            n = x.shape[0]
            half = self.width0 // 2
            freqs = torch.exp(-torch.arange(half, dtype=torch.float32) * (9.21 / half))
            angles = 500.0 * freqs
            embedding = torch.cat([angles.sin(), angles.cos()]).unsqueeze(0).expand(n, -1)
            t = self.time_mlp(embedding)
            x = self.stem(x)
            skips = [x]
            for i, block in enumerate(self.down):
                x = block(x, t)
                skips.append(x)
                if i < len(self.down) - 1:
                    x = self.pool(x)
            x = self.middle(x)
            for i, block in enumerate(self.up):
                skip = skips.pop()
                if skip.shape[-1] != x.shape[-1]:
                    x = nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
                x = block(torch.cat([x, skip], 1), t)
            return self.out(x)

    class FlowWarp(nn.Module):
        """Optical-flow refinement's shape ([N, 6, H, W]: two RGB frames):
        shared features at a quarter of the size, a flow predicted from the
        pair, the second frame's features warped by it (GridSample,
        bilinear, grid from a base grid plus the normalised flow), a local
        correlation of the pair (channel products summed), a refined flow."""
        def __init__(self, width=48):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3), nn.ReLU(),
                                          nn.Conv2d(width, width, 3, 2, 1), nn.ReLU())
            self.flow = nn.Sequential(nn.Conv2d(2 * width, width, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(width, 2, 3, padding=1))
            self.refine = nn.Sequential(nn.Conv2d(width + 3, width, 3, padding=1), nn.ReLU(),
                                        nn.Conv2d(width, 2, 3, padding=1))

        def forward(self, pair):
            a, b = self.features(pair[:, :3]), self.features(pair[:, 3:])
            flow = self.flow(torch.cat([a, b], 1))
            n, _, h, w = flow.shape
            ys = torch.linspace(-1.0, 1.0, h).view(1, h, 1).expand(n, h, w)
            xs = torch.linspace(-1.0, 1.0, w).view(1, 1, w).expand(n, h, w)
            grid = torch.stack([xs + flow[:, 0] * (2.0 / w), ys + flow[:, 1] * (2.0 / h)], 3)
            warped = nn.functional.grid_sample(b, grid, mode="bilinear", padding_mode="zeros",
                                               align_corners=True)
            correlation = (a * warped).sum(1, keepdim=True)
            return flow + self.refine(torch.cat([warped, correlation, flow], 1))

    modules = {"crnn_bilstm": (Crnn, ["logits"]), "unet_small": (UNet, ["logits"]),
               "espcn_x3": (Espcn, ["image"]), "transformer_causal": (CausalTransformer,
                                                                      ["logits"]),
               "conv1d_gru_audio": (AudioGru, ["logits"]),
               "pose_deconv_resnet18": (PoseDeconv, ["heatmaps"]),
               "mlp_mixer_small": (Mixer, ["logits"]), "dcgan_generator": (Generator, ["image"]),
               "csp_mish_detector": (CspMish, ["boxes_small", "boxes_large"]),
               "style_transfer": (StyleTransfer, ["image"]),
               "detr_small": (Detr, ["class_logits", "boxes"]),
               "mobilevit_small": (MobileVit, ["logits"]),
               "hrnet_small": (HrNet, ["heatmaps"]),
               "fcos_gn_head": (FcosHead, ["class_logits", "boxes", "centerness"]),
               "whisper_encoder_small": (WhisperEncoder, ["features"]),
               "segformer_small": (Segformer, ["logits"]),
               "convnext_v2_grn": (ConvNextV2, ["logits"]),
               "poolformer_small": (PoolFormer, ["logits"]),
               "diffusion_unet_small": (DiffusionUnet, ["noise"]),
               "flow_warp_gridsample": (FlowWarp, ["flow"])}
    module, outputs = modules[name]
    return module(), outputs
