"""The product's URLs plus /bench/hello/, a plain Django view through the same middleware."""

from django.http import HttpResponse
from django.urls import path

from config.urls import urlpatterns as product_urlpatterns


def hello(request):
    return HttpResponse(b'{"hello":"world"}', content_type="application/json")


urlpatterns = [path("bench/hello/", hello), *product_urlpatterns]
