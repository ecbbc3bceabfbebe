"""``gluon.model_zoo.vision``: MXNet 1.9.1's image classification models.

Every architecture of MXNet's model zoo (AlexNet, DenseNet, Inception v3, MobileNet v1
and v2, ResNet v1 and v2, SqueezeNet, VGG) with MXNet's constructor signatures and
MXNet's block structure, so parameter names, shapes and ``save_parameters`` keys are
MXNet's and its files load. ``get_model(name, **kwargs)`` builds one by MXNet's name
('resnet18_v1', 'mobilenetv2_1.0', 'squeezenet1.1', ...). ``pretrained=True`` loads
``<root>/<name>-<short sha1>.params`` (see `model_store`; nothing is downloaded).

The networks expect RGB images as (N, 3, H, W), H and W at least 224 (299 for Inception
v3), scaled to [0, 1] and normalized with mean (0.485, 0.456, 0.406) and standard
deviation (0.229, 0.224, 0.225).
"""
from mxcy.gluon.model_zoo.vision.alexnet import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.densenet import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.inception import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.resnet import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.squeezenet import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.vgg import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.mobilenet import *  # noqa: F401,F403
from mxcy.gluon.model_zoo.vision.alexnet import alexnet
from mxcy.gluon.model_zoo.vision.densenet import (densenet121, densenet161, densenet169,
                                                  densenet201)
from mxcy.gluon.model_zoo.vision.inception import inception_v3
from mxcy.gluon.model_zoo.vision.mobilenet import (
    mobilenet0_25, mobilenet0_5, mobilenet0_75, mobilenet1_0, mobilenet_v2_0_25,
    mobilenet_v2_0_5, mobilenet_v2_0_75, mobilenet_v2_1_0)
from mxcy.gluon.model_zoo.vision.resnet import (
    resnet18_v1, resnet18_v2, resnet34_v1, resnet34_v2, resnet50_v1, resnet50_v2,
    resnet101_v1, resnet101_v2, resnet152_v1, resnet152_v2)
from mxcy.gluon.model_zoo.vision.squeezenet import squeezenet1_0, squeezenet1_1
from mxcy.gluon.model_zoo.vision.vgg import (vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16,
                                             vgg16_bn, vgg19, vgg19_bn)

_MODELS = {
    'resnet18_v1': resnet18_v1, 'resnet34_v1': resnet34_v1,
    'resnet50_v1': resnet50_v1, 'resnet101_v1': resnet101_v1,
    'resnet152_v1': resnet152_v1, 'resnet18_v2': resnet18_v2,
    'resnet34_v2': resnet34_v2, 'resnet50_v2': resnet50_v2,
    'resnet101_v2': resnet101_v2, 'resnet152_v2': resnet152_v2,
    'vgg11': vgg11, 'vgg13': vgg13, 'vgg16': vgg16, 'vgg19': vgg19,
    'vgg11_bn': vgg11_bn, 'vgg13_bn': vgg13_bn, 'vgg16_bn': vgg16_bn,
    'vgg19_bn': vgg19_bn,
    'alexnet': alexnet,
    'densenet121': densenet121, 'densenet161': densenet161,
    'densenet169': densenet169, 'densenet201': densenet201,
    'squeezenet1.0': squeezenet1_0, 'squeezenet1.1': squeezenet1_1,
    'inceptionv3': inception_v3,
    'mobilenet1.0': mobilenet1_0, 'mobilenet0.75': mobilenet0_75,
    'mobilenet0.5': mobilenet0_5, 'mobilenet0.25': mobilenet0_25,
    'mobilenetv2_1.0': mobilenet_v2_1_0,
    'mobilenetv2_0.75': mobilenet_v2_0_75,
    'mobilenetv2_0.5': mobilenet_v2_0_5,
    'mobilenetv2_0.25': mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """The model called `name` (case-insensitive; MXNet's names), built with `kwargs`
    (``pretrained``, ``classes``, ``ctx``, ``root``, ...)."""
    key = name.lower()
    if key not in _MODELS:
        raise ValueError(f"Model {name} is not supported. Available options are\n\t"
                         + '\n\t'.join(sorted(_MODELS)))
    return _MODELS[key](**kwargs)
