"""Reference FLOP counts of ResNet-50 v1.5 training from PyTorch's FlopCounterMode.

tests/flops_probe_test.cpp compares tbd's flops probe against the figures this
script prints. torchvision is not needed: the model below is ResNet-50 v1.5
(stride in the 3x3 convolution, torchvision's layout) in plain torch.nn, the
same architecture as src/tbd/nn/resnet.cpp. Tensors live on the `meta` device,
so nothing is computed: FlopCounterMode only needs shapes.

Run: /work/main/.venv/bin/python tests/reference/resnet50_flops.py
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride):
        super().__init__()
        cout = planes * self.expansion
        self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)  # v1.5
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class ResNet50(nn.Module):
    def __init__(self, classes=1000, width=64, blocks=(3, 4, 6, 3)):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        layers, cin = [], width
        for s, n in enumerate(blocks):
            planes = width << s
            for b in range(n):
                layers.append(Bottleneck(cin, planes, 2 if (s > 0 and b == 0) else 1))
                cin = planes * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = F.adaptive_avg_pool2d(self.layers(x), 1).flatten(1)
        return self.fc(x)


def count(batch=2, size=224, **kw):
    model = ResNet50(**kw).to("meta").train()
    x = torch.randn(batch, 3, size, size, device="meta")
    y = torch.randint(0, kw.get("classes", 1000), (batch,), device="meta")
    params = sum(p.numel() for p in model.parameters())
    with FlopCounterMode(display=False) as fwd:
        loss = F.cross_entropy(model(x), y)
    with FlopCounterMode(display=False) as bwd:
        loss.backward()
    return params, fwd.get_total_flops(), bwd.get_total_flops()


if __name__ == "__main__":
    print("torch", torch.__version__)
    for name, batch, size, kw in [("full", 2, 224, {}),
                                  ("tiny", 2, 32, dict(classes=10, width=8, blocks=(1, 1, 1, 1)))]:
        params, f, b = count(batch, size, **kw)
        print(f"{name}: parameters {params}  batch {batch}  {size}x{size}")
        print(f"  forward  per sample {f // batch}")
        print(f"  backward per sample {b // batch}")
        print(f"  forward+backward per sample {(f + b) // batch}")
