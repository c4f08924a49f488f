"""Architectures the extra zoo defines itself, not torchvision's: the graphs
vision and sensor pipelines bring beyond classifiers and detectors
(recurrent recognisers, a YOLOv4-style detector with Mish, encoder-decoders with transposed convolutions and
skip connections, sub-pixel upsampling, attention over a sequence with a
causal mask, 1-D convolutions on a waveform, heatmap heads, token-mixing
MLPs, a generator from a latent vector). Each is small, built from plain
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

    modules = {"crnn_bilstm": (Crnn, ["logits"]), "unet_small": (UNet, ["logits"]),
               "espcn_x3": (Espcn, ["image"]), "transformer_causal": (CausalTransformer,
                                                                      ["logits"]),
               "conv1d_gru_audio": (AudioGru, ["logits"]),
               "pose_deconv_resnet18": (PoseDeconv, ["heatmaps"]),
               "mlp_mixer_small": (Mixer, ["logits"]), "dcgan_generator": (Generator, ["image"]),
               "csp_mish_detector": (CspMish, ["boxes_small", "boxes_large"])}
    module, outputs = modules[name]
    return module(), outputs
