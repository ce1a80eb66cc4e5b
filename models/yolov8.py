"""A YOLOv8-architecture detector (anchor-free, decoupled head with Distribution Focal Loss boxes).

Written from the published architecture of Ultralytics' yolov8.yaml (no code or weights taken from
it): Conv-BN-SiLU blocks, C2f stages, SPPF, a PAN neck (top-down then bottom-up path) and a Detect
head with separate box and class branches per level. The box branch predicts, for each of the four
box sides, a distribution over `reg_max` distance bins; the DFL layer turns it into its expectation,
and the distances from the anchor point give the box. The inference output is (batch, 4 + classes,
anchors): boxes as (cx, cy, w, h) in input pixels, then class probabilities.

The `width` and `depth` multipliers select the model scale; yolov8n is width 0.25, depth 0.33 (with
channels capped at 1024 before scaling). Weights keep PyTorch's default initialisation: the class
bias prior used for training (logits near -11) would make every class score ~0 with random weights,
leaving nothing for a numeric comparison to check.
"""
import math

import torch
from torch import nn


def scaled_channels(c, width, max_channels=1024):
    """Channel count of a stage at the given width multiplier, rounded up to a multiple of 8."""
    return int(math.ceil(min(c, max_channels) * width / 8) * 8)


def scaled_depth(n, depth):
    return max(round(n * depth), 1) if n > 1 else n


class Conv(nn.Module):
    """Convolution (no bias, 'same' padding) -> BatchNorm -> SiLU."""

    def __init__(self, c_in, c_out, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out, eps=1e-3, momentum=0.03)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    """Two 3x3 Convs with an optional residual connection (only when shapes allow it)."""

    def __init__(self, c_in, c_out, shortcut):
        super().__init__()
        self.cv1 = Conv(c_in, c_out, 3)
        self.cv2 = Conv(c_out, c_out, 3)
        self.add = shortcut and c_in == c_out

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    """CSP stage with two-way split: a 1x1 Conv makes 2c channels, split in halves; n Bottlenecks
    are chained on the second half and every intermediate result is concatenated before the output
    1x1 Conv."""

    def __init__(self, c_in, c_out, n, shortcut):
        super().__init__()
        self.c = c_out // 2
        self.cv1 = Conv(c_in, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, c_out, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    """Spatial pyramid pooling, fast: three chained 5x5 stride-1 max pools (receptive fields 5, 9,
    13) concatenated with their input."""

    def __init__(self, c_in, c_out, k=5):
        super().__init__()
        hidden = c_in // 2
        self.cv1 = Conv(c_in, hidden, 1)
        self.cv2 = Conv(4 * hidden, c_out, 1)
        self.pool = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        y = [self.cv1(x)]
        for _ in range(3):
            y.append(self.pool(y[-1]))
        return self.cv2(torch.cat(y, 1))


class DFL(nn.Module):
    """Distribution Focal Loss decoding: softmax over `bins` per box side, then the expected bin
    index, computed as a fixed 1x1 convolution with weights 0..bins-1."""

    def __init__(self, bins):
        super().__init__()
        self.bins = bins
        self.conv = nn.Conv2d(bins, 1, 1, bias=False).requires_grad_(False)
        self.conv.weight.data[:] = torch.arange(bins, dtype=torch.float).view(1, bins, 1, 1)

    def forward(self, x):
        b, _, a = x.shape  # (batch, 4 * bins, anchors)
        x = x.view(b, 4, self.bins, a).transpose(2, 1).softmax(1)
        return self.conv(x).view(b, 4, a)


def make_anchors(feats, strides, offset=0.5):
    """Anchor points (cell centres, in feature-map units) and the stride of each, for all levels."""
    points, stride_list = [], []
    for feat, stride in zip(feats, strides):
        h, w = feat.shape[2:]
        sx = torch.arange(w, dtype=feat.dtype) + offset
        sy = torch.arange(h, dtype=feat.dtype) + offset
        sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        points.append(torch.stack((sx, sy), -1).view(-1, 2))
        stride_list.append(torch.full((h * w, 1), stride, dtype=feat.dtype))
    return torch.cat(points).transpose(0, 1), torch.cat(stride_list).transpose(0, 1)


class Detect(nn.Module):
    """Decoupled anchor-free head: per level, a box branch (4 * reg_max DFL logits) and a class
    branch (class logits), each two 3x3 Convs and a 1x1 projection."""

    def __init__(self, classes, channels, strides=(8, 16, 32), reg_max=16):
        super().__init__()
        self.classes = classes
        self.reg_max = reg_max
        self.strides = strides
        self.outputs = classes + 4 * reg_max
        c_box = max(16, channels[0] // 4, 4 * reg_max)
        c_cls = max(channels[0], min(classes, 100))
        self.box = nn.ModuleList(
            nn.Sequential(Conv(c, c_box, 3), Conv(c_box, c_box, 3), nn.Conv2d(c_box, 4 * reg_max, 1))
            for c in channels)
        self.cls = nn.ModuleList(
            nn.Sequential(Conv(c, c_cls, 3), Conv(c_cls, c_cls, 3), nn.Conv2d(c_cls, classes, 1))
            for c in channels)
        self.dfl = DFL(reg_max)

    def forward(self, feats):
        b = feats[0].shape[0]
        levels = [torch.cat((box(f), cls(f)), 1) for f, box, cls in zip(feats, self.box, self.cls)]
        anchors, strides = make_anchors(feats, self.strides)
        x = torch.cat([lv.view(b, self.outputs, -1) for lv in levels], 2)
        box, cls = x.split((4 * self.reg_max, self.classes), 1)
        lt, rb = self.dfl(box).chunk(2, 1)
        top_left = anchors.unsqueeze(0) - lt
        bottom_right = anchors.unsqueeze(0) + rb
        xywh = torch.cat(((top_left + bottom_right) / 2, bottom_right - top_left), 1)
        return torch.cat((xywh * strides, cls.sigmoid()), 1)


class YOLOv8(nn.Module):
    """Backbone (P1..P5 with C2f stages and SPPF), PAN neck, Detect head on P3, P4, P5."""

    def __init__(self, classes=80, width=0.25, depth=0.33):
        super().__init__()
        c = [scaled_channels(x, width) for x in (64, 128, 256, 512, 1024)]
        n3, n6 = scaled_depth(3, depth), scaled_depth(6, depth)
        # Backbone.
        self.stem = Conv(3, c[0], 3, 2)  # P1/2
        self.down2 = Conv(c[0], c[1], 3, 2)  # P2/4
        self.stage2 = C2f(c[1], c[1], n3, True)
        self.down3 = Conv(c[1], c[2], 3, 2)  # P3/8
        self.stage3 = C2f(c[2], c[2], n6, True)
        self.down4 = Conv(c[2], c[3], 3, 2)  # P4/16
        self.stage4 = C2f(c[3], c[3], n6, True)
        self.down5 = Conv(c[3], c[4], 3, 2)  # P5/32
        self.stage5 = C2f(c[4], c[4], n3, True)
        self.sppf = SPPF(c[4], c[4], 5)
        # PAN neck: top-down (upsample + concat), then bottom-up (strided Conv + concat).
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.top_down4 = C2f(c[4] + c[3], c[3], n3, False)
        self.top_down3 = C2f(c[3] + c[2], c[2], n3, False)
        self.down_p3 = Conv(c[2], c[2], 3, 2)
        self.bottom_up4 = C2f(c[2] + c[3], c[3], n3, False)
        self.down_p4 = Conv(c[3], c[3], 3, 2)
        self.bottom_up5 = C2f(c[3] + c[4], c[4], n3, False)
        self.detect = Detect(classes, (c[2], c[3], c[4]))

    def forward(self, x):
        p3 = self.stage3(self.down3(self.stage2(self.down2(self.stem(x)))))
        p4 = self.stage4(self.down4(p3))
        p5 = self.sppf(self.stage5(self.down5(p4)))
        t4 = self.top_down4(torch.cat((self.up(p5), p4), 1))
        n3 = self.top_down3(torch.cat((self.up(t4), p3), 1))
        n4 = self.bottom_up4(torch.cat((self.down_p3(n3), t4), 1))
        n5 = self.bottom_up5(torch.cat((self.down_p4(n4), p5), 1))
        return self.detect([n3, n4, n5])


def yolov8n(classes=80):
    return YOLOv8(classes, width=0.25, depth=0.33)
